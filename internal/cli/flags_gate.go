package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// installerFlags name the identity that will install when it is not the
// one running the checks: --installer USER (or
// system:serviceaccount:NS:NAME) and --installer-group GROUP.
type installerFlags struct {
	user   string
	groups []string
}

// AddFlags declares --installer and --installer-group.
func (f *installerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.user, "installer", "", "judge the permissions of the identity that will run helm install or upgrade, not yours: a user, or system:serviceaccount:NS:NAME (Argo CD's controller, a CI deployer); needs create subjectaccessreviews")
	fs.StringSliceVar(&f.groups, "installer-group", nil, "with --installer: a group of the installer (comma-separated, repeatable)")
	describe(fs, "installer", placement{sectionCI, 1}, recorded)
	describe(fs, "installer-group", placement{sectionCI, 2}, recorded)
}

// Validate checks that the installer names a user or a ServiceAccount and
// that --installer-group goes with it.
func (f *installerFlags) Validate() error {
	_, err := f.identity()
	return err
}

// identity is the installer the flags name; nil without --installer.
func (f *installerFlags) identity() (*checks.Identity, error) {
	if f.user == "" {
		if len(f.groups) > 0 {
			return nil, usageError("--installer-group goes with --installer")
		}
		return nil, nil
	}
	id, err := checks.NewIdentity(f.user, f.groups)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return &id, nil
}

// ToConfig sets c.Installer.
func (f *installerFlags) ToConfig(_ context.Context, c *run.Config) error {
	id, err := f.identity()
	c.Installer = id
	return err
}

// DefaultServiceAccountDir is where Kubernetes mounts a pod's
// ServiceAccount token, CA bundle and namespace.
const DefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// TerminationMessageMax is what the kubelet keeps of a container's
// termination message: 4096 bytes
// (https://kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/).
const TerminationMessageMax = 4096

// inClusterFlags run the plugin from a pod (the gate Job): --in-cluster
// (the pod's ServiceAccount through rest.InClusterConfig, the subset of
// checks that needs no workstation: checks.InClusterChecks, no chart
// unless --chart), --termination-log FILE (the verdict, at most 4 KiB, for
// the container's termination message) and the hidden
// --service-account-dir (where the token and CA are; tests point it at
// files of their own).
type inClusterFlags struct {
	enabled           bool
	terminationLog    string
	serviceAccountDir string
	fs                *pflag.FlagSet
	// left are the checks the in-cluster run leaves out, with why.
	left map[string]string
}

// AddFlags declares the flags.
func (f *inClusterFlags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.BoolVar(&f.enabled, "in-cluster", false, "run from a pod (the gate Job): its ServiceAccount's credentials, the checks that need no workstation, probes from the pod network; no chart unless --chart")
	fs.StringVar(&f.terminationLog, "termination-log", "", "also write the verdict (at most 4 KiB) to this file: /dev/termination-log in the gate Job, Kubernetes' termination message")
	fs.StringVar(&f.serviceAccountDir, "service-account-dir", DefaultServiceAccountDir, "with --in-cluster: the directory holding the ServiceAccount's token and ca.crt")
	_ = fs.MarkHidden("service-account-dir")
	describe(fs, "in-cluster", placement{sectionCI, 3}, recorded)
	describe(fs, "termination-log", placement{sectionCI, 4}, notRecorded("the file is the pod's: a replay prints its report"))
	describe(fs, "service-account-dir", placement{sectionCI, 5}, notRecorded("the credentials are the pod's: a replay answers from the bundle"))
}

// Validate refuses --service-account-dir without --in-cluster.
func (f *inClusterFlags) Validate() error {
	if !f.enabled && f.fs != nil && f.fs.Changed("service-account-dir") {
		return usageError("--service-account-dir goes with --in-cluster")
	}
	return nil
}

// conflicts refuses what an in-cluster run cannot take (exit 2): --fix, a
// fleet.
func (f *inClusterFlags) conflicts(fix bool, fleet bool) error {
	switch {
	case !f.enabled:
		return nil
	case fix:
		return usageError("--in-cluster runs the gate, which only reads: not with --fix")
	case fleet:
		return usageError("--in-cluster checks the cluster the pod runs in: not with --contexts or --all-contexts")
	}
	return nil
}

// ToConfig sets c.InCluster and keeps the checks that need no workstation
// (checks.InClusterChecks; the installer's compiled before). In the
// cluster the default chart (a registry pull) is not used unless --chart
// names one.
func (f *inClusterFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.InCluster = f.enabled
	if !f.enabled {
		return nil
	}
	c.Selected, f.left = checks.InClusterChecks(c.Selected, c.Installer != nil)
	if c.Inputs.Chart == plan.DefaultChart && (f.fs == nil || !f.fs.Changed("chart")) {
		c.Inputs.Chart, c.Inputs.ChartVersionSource, c.Chart = "", plan.Source{}, nil
	}
	return nil
}

// restConfig is the pod's REST config: rest.InClusterConfig (host from
// KUBERNETES_SERVICE_HOST and _PORT, the token file re-read as it
// rotates, the CA), or the same built from --service-account-dir.
func (f *inClusterFlags) restConfig(getenv func(string) string) (*rest.Config, error) {
	if f.serviceAccountDir == DefaultServiceAccountDir {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("--in-cluster: %w; nothing checked", err)}
		}
		return cfg, nil
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, &ExitError{Code: ExitUnreachable, Err: errors.New("--in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not in a pod; nothing checked")}
	}
	token := filepath.Join(f.serviceAccountDir, "token")
	if _, err := os.Stat(token); err != nil {
		return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("--in-cluster: %w; nothing checked", err)}
	}
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(f.serviceAccountDir, "ca.crt")},
		BearerTokenFile: token,
	}, nil
}

// noteLeftOut says on w which checks the in-cluster run left out, and why.
func (f *inClusterFlags) noteLeftOut(w io.Writer) {
	ids := make([]string, 0, len(f.left))
	for id := range f.left {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(w, "in the cluster, %s does not run: it %s\n", id, f.left[id])
	}
}

// writeTerminationLog writes the verdict to --termination-log: a first line
// (passed or not, the counts), then each fail, error and warn with the
// first line of its message, cut to TerminationMessageMax bytes.
func (f *inClusterFlags) writeTerminationLog(name string, r *checks.Report, failed bool) error {
	if f.terminationLog == "" || r == nil {
		return nil
	}
	return os.WriteFile(f.terminationLog, []byte(terminationMessage(name, r, failed, f.left)), 0o644)
}

// terminationMessage is the gate's verdict in at most TerminationMessageMax
// bytes.
func terminationMessage(name string, r *checks.Report, failed bool, left map[string]string) string {
	s := r.Summary()
	var counts []string
	for _, st := range checks.Statuses {
		if s[st] > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", s[st], st))
		}
	}
	verdict := "passed"
	if failed {
		verdict = "FAILED"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s gate %s: %s\n", name, verdict, strings.Join(counts, ", "))
	for _, o := range r.Outcomes {
		if o.Status != checks.StatusFail && o.Status != checks.StatusError && o.Status != checks.StatusWarn {
			continue
		}
		msg, _, _ := strings.Cut(o.Message, "\n")
		fmt.Fprintf(&b, "%s %s: %s\n", o.Status, o.ID, msg)
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "not run in the cluster: %d check(s) that need a workstation\n", len(left))
	}
	return cutUTF8(b.String(), TerminationMessageMax)
}

// cutUTF8 cuts s to at most n bytes at a rune boundary, ending "…" when
// cut.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = "…\n"
	s = s[:n-len(more)]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + more
}
