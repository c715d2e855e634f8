package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

type measurer struct {
	c               config
	live            *testcluster.Live
	admin           *rest.Config
	plugin, dir     string
	adminKubeconfig string
	withKubectl     bool
	// upgrade adds the --upgrade run: a runtime release of chart 0.27.6 is
	// installed with real Helm after the other runs, then timed against
	// chart 0.30.0 (upgradeArgs).
	upgrade  bool
	fixtures string
	// cheap are the LISTs of the cheapest-encoding floor.
	cheap []floorReq
}

// sample is one timed run of a program.
type sample struct {
	wall  time.Duration
	rssKB int64
	// anonKB is the peak of the process's anonymous resident memory (its
	// heap and stacks: RSS without the executable's mapped file pages),
	// sampled every 5 ms from /proc; 0 when it could not be read.
	anonKB   int64
	requests int64 // the plugin's own count (total)
	pages    int64 // of which list continuation pages
	audit    auditCount
	bytes    int64
	code     int
	user     string
	statuses map[string]int
}

type series struct {
	name    string
	samples []sample
}

func (s *series) median(f func(sample) float64) float64 {
	v := make([]float64, len(s.samples))
	for i, x := range s.samples {
		v[i] = f(x)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (s *series) max(f func(sample) float64) float64 {
	m := 0.0
	for _, x := range s.samples {
		m = max(m, f(x))
	}
	return m
}

type results struct {
	factor                                  int
	scale                                   scale
	pre, chart, post, floor, cheap, kubectl series
	upgrade                                 series
	// remote are the plugin runs through the latency proxy (-rtt), by the
	// local series they repeat (pre, chart, post, upgrade); paired are the
	// local runs made just before each of them, the same way (the
	// difference is taken pair by pair, so that the machine's load, which
	// drifts over a bench, cancels out).
	remote, paired map[*series]*series
	rtt            time.Duration
	// fleet are the --all-contexts runs (first scale only), one per
	// --parallel of fleetParallels.
	fleet                 []fleetSample
	seedTime, total       time.Duration
	server                string
	loadBefore, loadAfter string
	duplicates            []string
	requestsByKind        map[string]string
	cheapReqs             []floorReq
	cheapNotes            []string
	// baseline is the plugin printing its version: the memory of the
	// executable itself (its file pages, the runtime, package init).
	baseline sample
}

var (
	ingressHost = "preflight.bench.example"
	// blackhole keeps every probe of the plugin on this machine: the
	// platform hosts (tunnel mode's targets) and the planned ingress host go
	// to a closed port on 127.0.0.1.
	blackhole = []string{
		"--connect-to", "g.codefresh.io:443:127.0.0.1:9",
		"--connect-to", "register-tunnels.cf-cd.com:443:127.0.0.1:9",
		"--connect-to", ingressHost + ":443:127.0.0.1:9",
		"--connect-to", ingressHost + ":80:127.0.0.1:9",
		"--connect-to", "quay.io:443:127.0.0.1:9",
	}
	// preArgs is the run without a chart (--chart=): the chart-based checks
	// skip. chartArgs (set once the fixtures are found) adds the real
	// gitops-runtime chart and the values it renders with.
	preArgs   = []string{"--access-mode", "ingress", "--ingress-host", ingressHost, "--ingress-class", "nginx", "--chart="}
	chartArgs []string
	postArgs  = []string{"--post"}
)

func (m *measurer) measure() (*results, error) {
	r := &results{pre: series{name: "pre-install run"}, chart: series{name: "pre-install run with --chart"}, post: series{name: "--post run"},
		floor: series{name: "JSON floor (curl)"}, cheap: series{name: "cheapest-encoding floor (curl)"}, kubectl: series{name: "kubectl get -o json"},
		remote: map[*series]*series{}, paired: map[*series]*series{}, rtt: m.c.rtt}
	r.server = m.admin.Host
	r.loadBefore = loadavg()
	vcmd := exec.Command(m.plugin, "--version")
	vcmd.Stdout = io.Discard
	b, err := timed(vcmd)
	if err != nil {
		return nil, fmt.Errorf("plugin --version: %w", err)
	}
	r.baseline = b
	// Warm up: the first request after seeding pays for caches (watch
	// cache of each kind); one untimed run of each program. The warm-up
	// run with the chart also tells, from the audit log, which LISTs the
	// cheapest-encoding floor makes.
	if _, err := m.runPlugin("warmup", chartArgs); err != nil {
		return nil, err
	}
	time.Sleep(500 * time.Millisecond)
	warm, err := auditLists(filepath.Join(m.dir, "audit.log"), "bench-plugin-warmup")
	if err != nil {
		return nil, err
	}
	if len(warm) == 0 {
		return nil, errors.New("the audit log shows no LIST of the warm-up run with the chart")
	}
	if m.cheap, err = m.cheapRequests(warm); err != nil {
		return nil, err
	}
	r.cheapReqs = m.cheap
	if _, err := m.runFloor(); err != nil {
		return nil, err
	}
	if _, err := m.runCheapFloor(); err != nil {
		return nil, err
	}
	for i := 0; i < m.c.runs; i++ {
		fmt.Printf("run %d/%d:", i+1, m.c.runs)
		s, err := m.runPlugin(fmt.Sprintf("pre-%d", i), preArgs)
		if err != nil {
			return nil, err
		}
		r.pre.samples = append(r.pre.samples, s)
		fmt.Printf(" pre %s", s.wall.Round(time.Millisecond))
		if s, err = m.runPlugin(fmt.Sprintf("chart-%d", i), chartArgs); err != nil {
			return nil, err
		}
		r.chart.samples = append(r.chart.samples, s)
		fmt.Printf(", chart %s", s.wall.Round(time.Millisecond))
		if s, err = m.runPlugin(fmt.Sprintf("post-%d", i), postArgs); err != nil {
			return nil, err
		}
		r.post.samples = append(r.post.samples, s)
		fmt.Printf(", post %s", s.wall.Round(time.Millisecond))
		if s, err = m.runFloor(); err != nil {
			return nil, err
		}
		r.floor.samples = append(r.floor.samples, s)
		fmt.Printf(", JSON floor %s", s.wall.Round(time.Millisecond))
		if s, err = m.runCheapFloor(); err != nil {
			return nil, err
		}
		r.cheap.samples = append(r.cheap.samples, s)
		fmt.Printf(", cheapest floor %s", s.wall.Round(time.Millisecond))
		fmt.Println()
	}
	if m.c.rtt > 0 {
		if err := m.measureRemote(r, []remoteRun{{&r.pre, preArgs}, {&r.chart, chartArgs}, {&r.post, postArgs}}); err != nil {
			return nil, err
		}
	}
	if m.upgrade {
		if err := m.installRelease(); err != nil {
			return nil, err
		}
		r.upgrade.name = "--upgrade run (0.27.6 → 0.30.0)"
		for i := 0; i < m.c.runs; i++ {
			s, err := m.runPlugin(fmt.Sprintf("upgrade-%d", i), m.upgradeArgs())
			if err != nil {
				return nil, err
			}
			r.upgrade.samples = append(r.upgrade.samples, s)
			fmt.Printf("upgrade run %d/%d: %s\n", i+1, m.c.runs, s.wall.Round(time.Millisecond))
		}
	}
	if m.c.rtt > 0 && len(r.upgrade.samples) > 0 {
		if err := m.measureRemote(r, []remoteRun{{&r.upgrade, m.upgradeArgs()}}); err != nil {
			return nil, err
		}
	}
	if m.upgrade { // the first scale: one fleet measurement is enough
		for _, p := range fleetParallels {
			f, err := m.runFleet(p, preArgs)
			if err != nil {
				return nil, err
			}
			r.fleet = append(r.fleet, f)
		}
	}
	// The kubectl dump last: it is a reference, and its gigabytes of JSON
	// leave the API server's heap large and its garbage collector busy for
	// whatever runs next (a plugin run after it took up to 2.5 s longer).
	if m.withKubectl {
		for i := 0; i < m.c.runs; i++ {
			s, err := m.runKubectl()
			if err != nil {
				return nil, err
			}
			r.kubectl.samples = append(r.kubectl.samples, s)
			fmt.Printf("kubectl run %d/%d: %s\n", i+1, m.c.runs, s.wall.Round(time.Millisecond))
		}
	}
	r.loadAfter = loadavg()

	// The audit log, written in blocking mode, has every request by now;
	// give the writer a moment to flush all the same.
	time.Sleep(500 * time.Millisecond)
	byUser, err := readAudit(filepath.Join(m.dir, "audit.log"))
	if err != nil {
		return nil, err
	}
	for _, ser := range []*series{&r.pre, &r.chart, &r.post, &r.upgrade} {
		for i := range ser.samples {
			a := byUser[ser.samples[i].user]
			ser.samples[i].audit = a
			for _, d := range a.duplicates {
				r.duplicates = append(r.duplicates, ser.name+": "+d)
			}
		}
	}
	if len(r.chart.samples) > 0 {
		r.requestsByKind = byUser[r.chart.samples[0].user].byKind
	}
	// Cross-check: every timed run with the chart made the LISTs of the
	// warm-up run the cheapest floor was taken from.
	want := listSet(warm)
	for _, s := range r.chart.samples {
		got, err := auditLists(filepath.Join(m.dir, "audit.log"), s.user)
		if err != nil {
			return nil, err
		}
		if d := setDiff(want, listSet(got)); d != "" {
			r.cheapNotes = append(r.cheapNotes, fmt.Sprintf("%s (%s) listed differently from the warm-up run the cheapest floor was taken from: %s", r.chart.name, s.user, d))
		}
	}
	for _, n := range r.cheapNotes {
		fmt.Println("note:", n)
	}
	return r, nil
}

// runPlugin runs the plugin once as a fresh user of group bench:plugin (so
// that the audit log tells its requests apart).
func (m *measurer) runPlugin(user string, args []string) (sample, error) {
	return m.runPluginVia(user, args, "")
}

// runPluginVia is runPlugin reaching the API server through the proxy at
// proxy ("" for none).
func (m *measurer) runPluginVia(user string, args []string, proxy string) (sample, error) {
	name := "bench-plugin-" + user
	_, kc, err := m.live.AddUser(name, "system:masters", pluginGroup)
	if err != nil {
		return sample{}, err
	}
	if proxy != "" {
		if kc, err = viaProxy(kc, proxy); err != nil {
			return sample{}, err
		}
	}
	full := append([]string{"--kubeconfig", kc, "-o", "json", "--debug-request-count", "--timeout", "2m"}, args...)
	full = append(full, blackhole...)
	s, stdout, stderr, err := m.execPlugin(full)
	if err != nil {
		return s, fmt.Errorf("plugin: %w\n%s", err, stderr.String())
	}
	s.user = name
	if s.code != 0 && s.code != 1 {
		return s, fmt.Errorf("plugin exited %d:\n%s", s.code, stderr.String())
	}
	mm := reqLine.FindStringSubmatch(stderr.String())
	if mm == nil {
		return s, fmt.Errorf("plugin printed no request count (is it built from this tree?):\n%s", stderr.String())
	}
	s.requests, _ = strconv.ParseInt(mm[1], 10, 64)
	s.pages, _ = strconv.ParseInt(mm[2], 10, 64)
	var doc struct {
		Checks []struct{ ID, Status, Message string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		return s, fmt.Errorf("plugin output is not JSON: %w", err)
	}
	s.statuses = map[string]int{}
	for _, c := range doc.Checks {
		s.statuses[c.Status]++
		if c.Status == "error" {
			fmt.Fprintf(os.Stderr, "\n  note: %s ended error: %s\n", c.ID, c.Message)
		}
	}
	return s, nil
}

// benchRelease is the runtime release the --upgrade run reads.
const benchRelease, benchReleaseNS = "cf-gitops-runtime", "codefresh"

// installRelease installs the runtime release of chart 0.27.6 with real
// Helm (no hooks) and the values of the runs with the chart. The seeded
// cluster holds community Argo CRDs without Helm's ownership metadata:
// --take-ownership (Helm 3.17+) adopts them, as the plugin's --fix would.
func (m *measurer) installRelease() error {
	helm, err := testcluster.HelmPath()
	if err != nil {
		return err
	}
	t0 := time.Now()
	chart := filepath.Join(m.fixtures, "gitops-runtime", "chart-0.27", "gitops-runtime")
	cmd := exec.Command(helm, "install", benchRelease, chart, "-n", benchReleaseNS, "--create-namespace", "--no-hooks", "--take-ownership",
		"--kubeconfig", m.adminKubeconfig, "--set", "global.runtime.name=bench", "--set", "global.codefresh.accountId=bench",
		"--set", "global.codefresh.userToken.token=not-a-token")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.dir}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm install of chart 0.27.6 for the --upgrade run: %w\n%s", err, out)
	}
	fmt.Printf("runtime release of chart 0.27.6 installed with helm in %s\n", time.Since(t0).Round(time.Millisecond))
	return nil
}

// upgradeArgs is the --upgrade run: the release to chart 0.30.0, its
// values reused (no values flag), as `helm upgrade` with no values flag.
func (m *measurer) upgradeArgs() []string {
	return []string{"--upgrade", "--release-name", benchRelease, "-n", benchReleaseNS,
		"--chart", filepath.Join(m.fixtures, "gitops-runtime", "chart", "gitops-runtime"), "--helm-major", "3"}
}

// execPlugin runs the plugin with args (environment: PATH and a HOME of its
// own), timed, and returns its sample and its output.
func (m *measurer) execPlugin(args []string) (s sample, stdout, stderr *bytes.Buffer, err error) {
	cmd := exec.Command(m.plugin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + m.dir}
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	s, err = timed(cmd)
	return s, stdout, stderr, err
}

// remoteRun is a local series and the arguments of its runs.
type remoteRun struct {
	local *series
	args  []string
}

// measureRemote repeats runs through a latency proxy of m.c.rtt, -runs
// times each, interleaved, each remote run beside a local run of the same
// arguments (its pair), the local one first in every other pair.
func (m *measurer) measureRemote(r *results, runs []remoteRun) error {
	target, err := serverAddr(m.admin)
	if err != nil {
		return err
	}
	p, err := startLatencyProxy(target, m.c.rtt)
	if err != nil {
		return err
	}
	defer p.Close()
	suffix := fmt.Sprintf(" through a %s round trip", m.c.rtt)
	for _, run := range runs {
		r.remote[run.local] = &series{name: run.local.name + suffix}
		r.paired[run.local] = &series{name: run.local.name}
	}
	for i := 0; i < m.c.runs; i++ {
		fmt.Printf("remote run %d/%d:", i+1, m.c.runs)
		for k, run := range runs {
			// The second run of a pair pays for the API server's garbage
			// collection after the first (its lists of 30,000 pods): the
			// order alternates from pair to pair, so that neither side
			// always pays.
			local := func() (sample, error) {
				return m.runPlugin(fmt.Sprintf("paired-%d-%d-%d", len(r.remote), k, i), run.args)
			}
			remote := func() (sample, error) {
				return m.runPluginVia(fmt.Sprintf("remote-%d-%d-%d", len(r.remote), k, i), run.args, p.Addr())
			}
			var l, s sample
			var err error
			if i%2 == 0 {
				if l, err = local(); err == nil {
					s, err = remote()
				}
			} else if s, err = remote(); err == nil {
				l, err = local()
			}
			if err != nil {
				return err
			}
			r.paired[run.local].samples = append(r.paired[run.local].samples, l)
			rs := r.remote[run.local]
			rs.samples = append(rs.samples, s)
			fmt.Printf(" %s %s (local %s)", run.local.name, s.wall.Round(time.Millisecond), l.wall.Round(time.Millisecond))
		}
		fmt.Println()
	}
	return nil
}
