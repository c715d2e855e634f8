// Command demo tells the story of kubectl gitops-preflight on a throwaway
// cluster that behaves like one (no cluster of yours is touched): etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok's simulated
// nodes (bin/k8s, `make test-binaries`). A community Argo CD runs on one node
// too small for the runtime; the plugin says what will break; `--fix --yes`
// adopts the Argo CD CRDs; the node pool grows; the runtime namespace
// enforces PodSecurity restricted and the admission checks name the hook
// Jobs it would refuse and the label that fixes it; real Helm installs the
// gitops-runtime chart with its hooks; `--post` shows the runtime healthy or
// names the pod that is not. Then the upgrade story (upgrade.go), the Argo
// CD story (argocd.go: a runtime handed to Argo CD, a commit judged before
// Argo CD syncs it) and the fleet story (fleet.go: --all-contexts over two
// clusters, --bundle and replay). Each step is timed. Run it with `make demo`.
//
// It reads the upstream Argo CD and Argo Rollouts manifests and the
// gitops-runtime chart from -fixtures (default: where internal/fixtures
// finds them, `make fixtures` fills the checkout's cache) and never dials
// out of this machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

func main() {
	plugin := flag.String("plugin", "bin/kubectl-gitops_preflight", "path of the built plugin")
	fixtureDir := flag.String("fixtures", "", "upstream fixtures folder: argo-cd/install.yaml, argo-rollouts/install.yaml and the gitops-runtime charts (default: $"+fixtures.EnvVar+", ../shared/fixtures/upstream, then the cache of `make fixtures`)")
	logPath := flag.String("log", filepath.Join("bin", "demo.log"), "where the full output of the helm and kubectl commands goes, Helm's chart warnings included")
	story := flag.String("story", "all", "which story: install, upgrade, argocd, fleet or all (install, upgrade, argocd, then fleet)")
	flag.Parse()
	var err error
	if *fixtureDir == "" {
		*fixtureDir, err = fixtures.Dir("argo-cd/install.yaml", "argo-rollouts/install.yaml",
			"gitops-runtime/chart/gitops-runtime", "gitops-runtime/chart-0.26/gitops-runtime", "gitops-runtime/chart-0.27/gitops-runtime")
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
	}
	switch *story {
	case "install":
		err = run(*plugin, *fixtureDir, *logPath)
	case "upgrade":
		err = runUpgrade(*plugin, *fixtureDir, *logPath)
	case "argocd":
		err = runArgoCD(*plugin, *fixtureDir, *logPath)
	case "fleet":
		err = runFleet(*plugin, *fixtureDir, *logPath, false)
	case "all":
		if err = run(*plugin, *fixtureDir, *logPath); err == nil {
			err = runUpgrade(*plugin, *fixtureDir, *logPath)
		}
		if err == nil {
			err = runArgoCD(*plugin, *fixtureDir, *logPath)
		}
		if err == nil {
			err = runFleet(*plugin, *fixtureDir, *logPath, true)
		}
	default:
		err = fmt.Errorf("-story must be install, upgrade, argocd, fleet or all, not %q", *story)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

type demo struct {
	dir, plugin, kubeconfig, helm string
	total                         time.Time
	// width is the terminal's, for the story's own lines (0: not a terminal).
	width int
	// log receives the full output of every command run by run (helm,
	// kubectl); the story leaves out Helm's chart warnings (helmWarning).
	log *os.File
}

// helmWarning matches the warnings Helm logs while coalescing a chart's
// values ("coalesce.go:301: warning: ..."): Helm's logger prefixes the Go
// file and line. They belong in the log, not the story.
var helmWarning = regexp.MustCompile(`^\s*[a-z_]+\.go:[0-9]+: warning: `)

// say prints text word-wrapped to the terminal's width (reporters.Wrap, as
// the plugin's report), the first line indented by first spaces and the
// rest by rest; not wrapped when stdout is not a terminal.
func (d *demo) say(text string, first, rest int) {
	for _, l := range reporters.Wrap(text, d.width, first, rest) {
		fmt.Println(l)
	}
}

// command prints a command line as the story shows it: the demo cluster's
// kubeconfig and working folder left out (every command uses them), and
// wrapped with shell continuations to the terminal's width.
func (d *demo) command(args []string) {
	var shown []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--kubeconfig" && i+1 < len(args) {
			i++
			continue
		}
		a := strings.TrimPrefix(args[i], d.dir+string(filepath.Separator))
		if strings.ContainsAny(a, " ()*?") {
			a = "'" + a + "'" // as typed in a shell
		}
		shown = append(shown, a)
	}
	line := "$ " + strings.Join(shown, " ")
	if d.width <= 0 {
		fmt.Println(line)
		return
	}
	lines := reporters.Wrap(line, d.width-2, 0, 4)
	for i, l := range lines {
		if i < len(lines)-1 {
			l += " \\"
		}
		fmt.Println(l)
	}
}

// step prints a heading, runs f and prints how long it took.
func (d *demo) step(title string, f func() error) error {
	fmt.Println()
	d.say("━━ "+title, 0, 3)
	start := time.Now()
	err := f()
	d.say(fmt.Sprintf("(%s: %.1fs; %.0fs since start)", title, time.Since(start).Seconds(), time.Since(d.total).Seconds()), 3, 4)
	return err
}

// newDemo prepares one story: the terminal's width, the log of the helm
// and kubectl commands (appended to when appendLog, after an earlier
// story), the plugin and Helm, and the fixtures the story needs (paths
// below fixtures). It returns the demo, the control plane's binaries and a
// func that closes the log.
func newDemo(plugin, fixtures, logPath string, appendLog bool, need ...string) (*demo, string, func(), error) {
	d := &demo{total: time.Now()}
	if term.IsTerminal(int(os.Stdout.Fd())) {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			d.width = w
		} else {
			d.width = 80
		}
	}
	for _, p := range need {
		if _, err := os.Stat(filepath.Join(fixtures, p)); err != nil {
			return nil, "", nil, fmt.Errorf("fixture %s missing (pass -fixtures DIR): %w", filepath.Join(fixtures, p), err)
		}
	}
	var err error
	if d.plugin, err = filepath.Abs(plugin); err != nil {
		return nil, "", nil, err
	}
	if d.helm, err = testcluster.HelmPath(); err != nil {
		return nil, "", nil, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, "", nil, err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendLog {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	if d.log, err = os.OpenFile(logPath, flags, 0o644); err != nil {
		return nil, "", nil, err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join("bin", "k8s")
	}
	return d, assets, func() { _ = d.log.Close() }, nil
}

func run(plugin, fixtures, logPath string) error {
	argoCD := filepath.Join("argo-cd", "install.yaml")
	chartDir := filepath.Join("gitops-runtime", "chart", "gitops-runtime")
	d, assets, closeLog, err := newDemo(plugin, fixtures, logPath, false, argoCD, chartDir)
	if err != nil {
		return err
	}
	defer closeLog()
	argoCD, chart := filepath.Join(fixtures, argoCD), filepath.Join(fixtures, chartDir)
	d.say(fmt.Sprintf("(the full output of the helm and kubectl commands, Helm's warnings included: %s)", logPath), 0, 1)
	ctx := context.Background()
	var live *testcluster.Live
	if err := d.step("Start a local cluster: etcd, kube-apiserver, controller-manager, scheduler, kwok", func() error {
		if live, err = testcluster.StartLive(ctx, assets); err != nil {
			return err
		}
		// kube-dns, as kubeadm's CoreDNS addon creates it: the runtime's
		// internal-router resolves names through it.
		return testcluster.CreateClusterDNS(ctx, live.Kube)
	}); err != nil {
		return err
	}
	defer live.Stop()
	d.dir, d.kubeconfig = live.Dir, live.Kubeconfig

	values := filepath.Join(d.dir, "values.yaml")
	if err := os.WriteFile(values, []byte("global:\n  codefresh:\n    accountId: demo-account\n    userToken:\n      token: demo-token\n  runtime:\n    name: demo\n"), 0o600); err != nil {
		return err
	}
	// The pre-install runs read the chart the demo installs, with the same
	// values, as a user passes them (--chart, -f): no chart is pulled.
	pre := []string{"--chart", chart, "-f", values}

	if err := d.step("A community Argo CD on one small node (1 CPU, 2Gi)", func() error {
		if err := testcluster.CreateKwokNode(ctx, live.Kube, testcluster.NodeSpec{Name: "small-1", CPU: "1", Memory: "2Gi"}); err != nil {
			return err
		}
		if err := d.kubectl("create", "namespace", "argocd"); err != nil {
			return err
		}
		if err := d.kubectl("apply", "--server-side", "-n", "argocd", "-f", argoCD); err != nil {
			return err
		}
		return d.kubectl("wait", "-n", "argocd", "--for=condition=Available", "deployment", "--all", "--timeout=90s")
	}); err != nil {
		return err
	}

	if err := d.step("What would break", func() error {
		return d.preflight(append([]string{"--skip", "platform-reachable"}, pre...)...)
	}); err != nil {
		return err
	}
	if err := d.step("Fix what can be fixed: adopt the Argo CD CRDs for the runtime's release", func() error {
		return d.preflight(append([]string{"--only", "argo-crds-ownership,helm-ownership", "--fix", "--yes"}, pre...)...)
	}); err != nil {
		return err
	}
	if err := d.step("Grow the node pool: two nodes of 4 CPU, 8Gi join", func() error {
		for _, n := range []string{"worker-1", "worker-2"} {
			if err := testcluster.CreateKwokNode(ctx, live.Kube, testcluster.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"}); err != nil {
				return err
			}
		}
		return d.preflight(append([]string{"--only", "node-resources,runtime-schedulable,argo-crds-ownership,helm-ownership,chart-renders"}, pre...)...)
	}); err != nil {
		return err
	}

	admission := append([]string{"--only", "admission-objects,admission-pods,resource-quota,admission-webhooks"}, pre...)
	if err := d.step("The platform team's namespace enforces PodSecurity restricted", func() error {
		if err := d.kubectl("create", "namespace", "codefresh"); err != nil {
			return err
		}
		if err := d.kubectl("label", "namespace", "codefresh", "pod-security.kubernetes.io/enforce=restricted"); err != nil {
			return err
		}
		// The API server's PodSecurity admission reads namespace labels
		// through an informer: give it a moment.
		time.Sleep(2 * time.Second)
		d.say("The chart's hook Jobs set no securityContext: their pods would be refused and helm install would wait for them until its timeout. The dry runs say so now, and what fixes it.", 3, 3)
		return d.preflight(admission...)
	}); err != nil {
		return err
	}
	if err := d.step("Label the namespace as the hint says: every pod of the release meets baseline", func() error {
		if err := d.kubectl("label", "namespace", "codefresh", "pod-security.kubernetes.io/enforce=baseline", "--overwrite"); err != nil {
			return err
		}
		time.Sleep(2 * time.Second)
		return d.preflight(admission...)
	}); err != nil {
		return err
	}

	if err := d.step("helm install the gitops-runtime chart 0.30.0 (hooks included, --wait)", func() error {
		return d.run(d.helm, "install", "cf-gitops-runtime", chart, "-n", "codefresh", "--create-namespace", "-f", values,
			"--wait", "--timeout", "3m", "--kubeconfig", d.kubeconfig)
	}); err != nil {
		return err
	}
	if err := d.step("After the install", func() error {
		d.say("The runtime never registers here (a demo has no Codefresh platform), so Secret codefresh-token never appears: expect that one warning, and nothing else.", 3, 3)
		return d.preflight("--post")
	}); err != nil {
		return err
	}
	fmt.Println()
	d.say(fmt.Sprintf("Done in %.0fs. The cluster is stopped now.", time.Since(d.total).Seconds()), 0, 0)
	return nil
}

// preflight runs the plugin as users do, `kubectl gitops-preflight`, with the
// plugin on PATH as krew or `make install` would put it; without kubectl on
// PATH it runs the binary itself. A non-zero exit is part of the story.
func (d *demo) preflight(args ...string) error {
	cmd, err := d.preflightCmd(args)
	if err != nil {
		return err
	}
	// The terminal's own: the report is wrapped to it, as users see it.
	// (The plugin prints no Helm warnings: it silences Go's log.)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	_, err = exitCode(cmd.Run())
	return err
}

// exitCode is the exit code of a finished command whose error is err,
// printed as "(exit code N)" when not 0; err when the command did not run.
func exitCode(err error) (int, error) {
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		fmt.Printf("(exit code %d)\n", ee.ExitCode())
		return ee.ExitCode(), nil
	}
	return 0, err
}

// preflightCmd prints the command line of a plugin run and returns the
// command that runs it: with the demo cluster's kubeconfig and the
// Blackhole rules, except for `replay`, which reads no cluster.
func (d *demo) preflightCmd(args []string) (*exec.Cmd, error) {
	link := filepath.Join(d.dir, "kubectl-gitops_preflight")
	if _, err := os.Lstat(link); err != nil {
		if err := os.Symlink(d.plugin, link); err != nil {
			return nil, err
		}
	}
	d.command(append([]string{"kubectl", "gitops-preflight"}, args...))
	if len(args) == 0 || args[0] != "replay" {
		// Nothing dials out of this machine: the platform hosts and the
		// default chart registry go to a closed port on 127.0.0.1 (not
		// shown).
		args = append(append([]string{"--kubeconfig", d.kubeconfig}, args...), testcluster.Blackhole...)
	}
	var cmd *exec.Cmd
	if _, err := exec.LookPath("kubectl"); err == nil {
		cmd = exec.Command("kubectl", append([]string{"gitops-preflight"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+d.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	} else {
		cmd = exec.Command(d.plugin, args...)
	}
	cmd.Env = append(cmd.Environ(), "HELM_BIN="+d.helm) // the helm the demo installs with
	return cmd, nil
}

func (d *demo) kubectl(args ...string) error {
	return d.run("kubectl", append([]string{"--kubeconfig", d.kubeconfig}, args...)...)
}

// run runs a command, printing it and its output indented.
func (d *demo) run(name string, args ...string) error {
	shown := filepath.Base(name)
	d.command(append([]string{shown}, args...))
	fmt.Fprintf(d.log, "$ %s %s\n", shown, strings.Join(args, " "))
	out, err := exec.Command(name, args...).CombinedOutput()
	if _, werr := d.log.Write(out); werr != nil {
		return werr
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if !helmWarning.MatchString(l) {
			lines = append(lines, l)
		}
	}
	if len(lines) > 12 {
		lines = append(lines[:6], append([]string{fmt.Sprintf("  ... (%d lines)", len(lines)-10)}, lines[len(lines)-4:]...)...)
	}
	for _, l := range lines {
		if l != "" {
			d.say(l, 2, 6)
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", shown, strings.Join(args, " "), err)
	}
	return nil
}
