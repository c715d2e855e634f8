package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func memTotal() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == "MemTotal" {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func toolVersion(args ...string) string {
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func secs(v float64) string { return fmt.Sprintf("%.2f s", v) }
func mib(kb float64) string { return fmt.Sprintf("%.0f MiB", kb/1024) }

var (
	wallOf     = func(s sample) float64 { return s.wall.Seconds() }
	rssOf      = func(s sample) float64 { return float64(s.rssKB) }
	anonOf     = func(s sample) float64 { return float64(s.anonKB) }
	reqsOf     = func(s sample) float64 { return float64(s.requests - s.pages) }
	pagesOf    = func(s sample) float64 { return float64(s.pages) }
	auditReqs  = func(s sample) float64 { return float64(s.audit.total - s.audit.pages) }
	auditPages = func(s sample) float64 { return float64(s.audit.pages) }
	// auditReads is a run's requests other than LIST pages and dry runs.
	auditReads   = func(s sample) float64 { return float64(s.audit.total - s.audit.pages - s.audit.dryRuns) }
	auditDryRuns = func(s sample) float64 { return float64(s.audit.dryRuns) }
	bytesOf      = func(s sample) float64 { return float64(s.bytes) }
)

func (r *results) plugins() []*series { return []*series{&r.chart, &r.pre, &r.post} }

// sizeLabel is a sweep column's heading.
func (r *results) sizeLabel() string {
	return fmt.Sprintf("%dx (%s nodes)", r.factor, thousands(r.scale.Nodes))
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func machineLine(all []*results) string {
	var loads []string
	for _, r := range all {
		loads = append(loads, fmt.Sprintf("%dx %s → %s", r.factor, r.loadBefore, r.loadAfter))
	}
	return fmt.Sprintf("Date: %s. Machine: %d CPUs (%s), %s memory, %s/%s, %s; load average before → after measuring: %s (the machine may be shared: timings are noisy).",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), cpuModel(), memTotal(), runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.Join(loads, "; "))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// sweepTable has a row per series and a column per size.
func sweepTable(all []*results) string {
	var b strings.Builder
	b.WriteString("| median wall time (plugin runs, kubectl: peak RSS; floors: bytes read) |")
	for _, r := range all {
		b.WriteString(" " + r.sizeLabel() + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(all)) + "\n")
	row := func(name string, cell func(r *results) string) {
		b.WriteString("| " + name + " |")
		for _, r := range all {
			b.WriteString(" " + cell(r) + " |")
		}
		b.WriteString("\n")
	}
	for i, name := range []string{"pre-install run with the chart", "pre-install run without a chart (`--chart=`)", "`--post` run"} {
		row(name, func(r *results) string {
			s := r.plugins()[i]
			return fmt.Sprintf("%s (%s)", secs(s.median(wallOf)), mib(s.max(rssOf)))
		})
	}
	for i, name := range []string{"with the chart", "without a chart", "`--post`"} {
		row("peak anonymous memory, "+name+" (RSS without the executable's file pages)", func(r *results) string {
			return mib(r.plugins()[i].max(anonOf))
		})
	}
	row("the executable alone (`--version`): peak RSS / anonymous", func(r *results) string {
		return mib(float64(r.baseline.rssKB)) + " / " + mib(float64(r.baseline.anonKB))
	})
	row("cheapest-encoding floor (protobuf / metadata-only)", func(r *results) string {
		return fmt.Sprintf("%s (%.1f MB)", secs(r.cheap.median(wallOf)), r.cheap.median(bytesOf)/1e6)
	})
	row("JSON floor", func(r *results) string {
		return fmt.Sprintf("%s (%.1f MB)", secs(r.floor.median(wallOf)), r.floor.median(bytesOf)/1e6)
	})
	row("`kubectl get ... -o json`", func(r *results) string {
		if len(r.kubectl.samples) == 0 {
			return "not run"
		}
		return fmt.Sprintf("%s (%s)", secs(r.kubectl.median(wallOf)), mib(r.kubectl.max(rssOf)))
	})
	row("with the chart ÷ cheapest floor / ÷ JSON floor", func(r *results) string {
		w := r.chart.median(wallOf)
		return ratio(w, r.cheap.median(wallOf)) + " / " + ratio(w, r.floor.median(wallOf))
	})
	row("without a chart ÷ cheapest floor / ÷ JSON floor", func(r *results) string {
		w := r.pre.median(wallOf)
		return ratio(w, r.cheap.median(wallOf)) + " / " + ratio(w, r.floor.median(wallOf))
	})
	row("`--post` ÷ cheapest floor / ÷ JSON floor", func(r *results) string {
		w := r.post.median(wallOf)
		return ratio(w, r.cheap.median(wallOf)) + " / " + ratio(w, r.floor.median(wallOf))
	})
	row("API requests with the chart (+ list pages)", func(r *results) string {
		return fmt.Sprintf("%.0f (+%.0f)", r.chart.median(reqsOf), r.chart.median(pagesOf))
	})
	row("seeding", func(r *results) string { return r.seedTime.Round(time.Second).String() })
	return b.String()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

// targetsTable has a row per target and size.
func targetsTable(all []*results) string {
	var b strings.Builder
	b.WriteString("| target | size | measured | |\n|---|---|---|---|\n")
	for _, r := range all {
		w, f := r.chart.median(wallOf), r.cheap.median(wallOf)
		fmt.Fprintf(&b, "| pre-install run with the chart ≤ 1.2× the cheapest-encoding floor | %s | %s (%s vs %s) | %s |\n", r.sizeLabel(), ratio(w, f), secs(w), secs(f), met(f > 0 && w <= 1.2*f))
	}
	first, last := all[0], all[len(all)-1]
	rssLine := func(r *results) (string, float64) {
		var parts []string
		m := 0.0
		for _, s := range r.plugins() {
			parts = append(parts, fmt.Sprintf("%s %s", s.name, mib(s.max(rssOf))))
			m = max(m, s.max(rssOf))
		}
		return strings.Join(parts, ", "), m
	}
	txt, rss1 := rssLine(first)
	fmt.Fprintf(&b, "| peak RSS ≤ 64 MiB (every plugin run) | %s | %s | %s |\n", first.sizeLabel(), txt, met(rss1 <= 64*1024))
	if len(all) > 1 {
		var parts []string
		ok := true
		for i, s := range last.plugins() {
			a, z := first.plugins()[i].max(rssOf), s.max(rssOf)
			parts = append(parts, fmt.Sprintf("%s %s → %s (%+.0f%%)", s.name, mib(a), mib(z), 100*(z/a-1)))
			ok = ok && z <= 1.2*a
		}
		fmt.Fprintf(&b, "| peak RSS ≤ +20%% at the largest size relative to %dx | %s | %s | %s |\n", first.factor, last.sizeLabel(), strings.Join(parts, "; "), met(ok))
	}
	p := first.post.median(wallOf)
	fmt.Fprintf(&b, "| `--post` ≤ 1 s | %s | %s | %s |\n", first.sizeLabel(), secs(p), met(p <= 1))
	for _, r := range all {
		w, f := r.chart.median(wallOf), r.cheap.median(wallOf)
		fmt.Fprintf(&b, "| pre-install run with the chart and the admission checks < 2× the cheapest-encoding floor | %s | %s | %s |\n", r.sizeLabel(), ratio(w, f), met(f > 0 && w < 2*f))
		if len(r.upgrade.samples) > 0 {
			u := r.upgrade.median(wallOf)
			fmt.Fprintf(&b, "| `--upgrade` ≤ 1.5× the pre-install run with the chart | %s | %s (%s vs %s) | %s |\n", r.sizeLabel(), ratio(u, w), secs(u), secs(w), met(u <= 1.5*w))
		}
		for _, s := range r.remoteRows() {
			extra := s.difference() / r.rtt.Seconds()
			fmt.Fprintf(&b, "| %s within 10 round trips of its local time at %s | %s | %+.1f round trips | %s |\n", s.local.name, r.rtt, r.sizeLabel(), extra, met(extra <= 10))
		}
	}
	for _, r := range all {
		m, d := 0.0, 0.0
		runs := r.plugins()
		if len(r.upgrade.samples) > 0 {
			runs = append(runs, &r.upgrade)
		}
		for _, s := range runs {
			m, d = max(m, s.max(auditReads)), max(d, s.max(auditDryRuns))
		}
		fmt.Fprintf(&b, "| ≤ 40 reads per run, LIST pages and dry runs aside (audit log; the dry runs are one per created or changed object and one per workload, %.0f at most) | %s | %.0f at most | %s |\n", d, r.sizeLabel(), m, met(m <= 40))
	}
	for _, r := range all {
		dup := "none"
		if len(r.duplicates) > 0 {
			dup = strings.Join(r.duplicates, "; ")
		}
		fmt.Fprintf(&b, "| each kind listed at most once per run (audit log) | %s | %s | %s |\n", r.sizeLabel(), dup, met(len(r.duplicates) == 0))
	}
	return b.String()
}

func markdown(c config, all []*results, total time.Duration) string {
	var b strings.Builder
	first := all[0]
	fmt.Fprintf(&b, "# make bench results\n\n%s\n\n", machineLine(all))
	var sizes []string
	for _, r := range all {
		sizes = append(sizes, fmt.Sprintf("%dx: %s nodes, %s pods, %s namespaces, %s Services, %s Deployments (seeded in %s)", r.factor,
			thousands(r.scale.Nodes), thousands(r.scale.Nodes*r.scale.PodsPerNode), thousands(r.scale.Namespaces), thousands(r.scale.Services), thousands(r.scale.Deployments), r.seedTime.Round(time.Second)))
	}
	fmt.Fprintf(&b, "Cluster: for each size a fresh test control plane (etcd on tmpfs + kube-apiserver from bin/k8s, no kubelet or controllers, stopped before the next size) seeded with Ready nodes, Running pods bound to them (%d per node, cpu 100m and memory 128Mi requests each; bound and set Running by the bench, there being no scheduler or kubelet), namespaces, headless Services and Deployments in these numbers:\n\n", c.PodsPerNode)
	for _, s := range sizes {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	fmt.Fprintf(&b, "\nand at every size the Argo CD and Argo Rollouts CRDs (upstream manifests) plus %d other CRDs, ingress-nginx (upstream manifest, statuses set) and %d Helm release-Secret decompression bombs (~760 MB each once gunzipped). The whole bench took %s.\n\n",
		c.OtherCRDs, c.ReleaseBombs, total.Round(time.Second))
	fmt.Fprintf(&b, "References: kubectl %s; curl %s.\n\n", toolVersion("kubectl", "version", "--client"), toolVersion("curl", "--version"))
	fmt.Fprintf(&b, "Pre-install run: `kubectl gitops-preflight %s -o json` (probes sent to a closed port on 127.0.0.1); with the chart: the same with `--chart` the real gitops-runtime chart from the fixtures. Post run: `kubectl gitops-preflight --post -o json`. Medians of %d interleaved runs; API requests exclude LIST continuation pages, which are counted apart.\n\n",
		strings.Join(preArgs, " "), c.runs)
	fmt.Fprintf(&b, "Two floors, each fetched with concurrent `curl`s to /dev/null, one unpaginated LIST per kind and selector, nothing decoded: the **JSON floor** (every kind the checks read, as JSON: %s) and the **cheapest-encoding floor** (the LISTs the pre-install run with the chart made, taken from the audit log of an untimed run, without limit and continue, in the cheapest encoding the apiserver offers: protobuf for built-in kinds, metadata-only `PartialObjectMetadataList` for CustomResourceDefinitions, Secrets, ConfigMaps and custom resources). The discovery, GET and SelfSubjectAccessReview requests the plugin makes are in neither floor. ",
		"`"+strings.Join(floorKinds, "`, `")+"`")
	if c.kubectlEvery {
		b.WriteString("The `kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json` dump is timed at every size, after the plugin runs of that size: its gigabytes of JSON leave the API server busy collecting garbage for whatever runs next.\n\n")
	} else {
		fmt.Fprintf(&b, "The `kubectl get nodes,ns,svc,deploy,ds,sts,crd,ingressclass,pods -A -o json` dump is timed at %dx only (`-kubectl-every-scale` for all), after the plugin runs of that size: its gigabytes of JSON leave the API server busy collecting garbage for whatever runs next.\n\n", first.factor)
	}

	b.WriteString("## Sweep\n\n")
	b.WriteString(sweepTable(all))
	b.WriteString("\n![wall time against cluster size](sweep.svg)\n\n![peak RSS of the plugin against cluster size](sweep-rss.svg)\n\n")
	b.WriteString("## Targets\n\n")
	b.WriteString(targetsTable(all))
	b.WriteString("\n")

	for _, r := range all {
		fmt.Fprintf(&b, "## %s\n\n", r.sizeLabel())
		fmt.Fprintf(&b, "| what | wall (median) | wall (max) | peak RSS (max) | peak anonymous (max) | ÷ cheapest floor | ÷ JSON floor | API requests (plugin count / audit log) | list pages (plugin / audit) | bytes read |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
		cf, jf := r.cheap.median(wallOf), r.floor.median(wallOf)
		rows := r.plugins()
		if len(r.upgrade.samples) > 0 {
			rows = append(rows, &r.upgrade)
		}
		for _, s := range rows {
			w := s.median(wallOf)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | |\n", s.name, secs(w), secs(s.max(wallOf)), mib(s.max(rssOf)), mib(s.max(anonOf)),
				ratio(w, cf), ratio(w, jf), s.median(reqsOf), s.median(auditReqs), s.median(pagesOf), s.median(auditPages))
		}
		for _, s := range []*series{&r.cheap, &r.floor} {
			fmt.Fprintf(&b, "| %s | %s | %s | %s (one curl) | | | | %.0f | | %.1f MB |\n", s.name, secs(s.median(wallOf)), secs(s.max(wallOf)), mib(s.max(rssOf)), s.median(reqsOf), s.median(bytesOf)/1e6)
		}
		if len(r.kubectl.samples) > 0 {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | | | | | | %.1f MB |\n", r.kubectl.name, secs(r.kubectl.median(wallOf)), secs(r.kubectl.max(wallOf)), mib(r.kubectl.max(rssOf)), r.kubectl.median(bytesOf)/1e6)
		}
		b.WriteString("\n")
		if len(r.upgrade.samples) > 0 {
			fmt.Fprintf(&b, "The `--upgrade` run (the release's revision records, Helm's upgrade action over them rendering chart 0.30.0, and one server-side dry run per changed or created object as Helm's own code computes it, 8 at a time, the live objects read once per kind) takes %s, %s the pre-install run with the chart, with %.0f API requests (exit code %d; %s).\n\n",
				secs(r.upgrade.median(wallOf)), ratio(r.upgrade.median(wallOf), r.chart.median(wallOf)), r.upgrade.median(reqsOf), r.upgrade.samples[0].code, statusLine(r.upgrade.samples[0].statuses))
		}
		b.WriteString(remoteTable(r))
		b.WriteString(fleetReport(r))
		fmt.Fprintf(&b, "The executable alone (`--version`): peak RSS %s, of which anonymous %s; the rest is the executable's own file pages mapped by the kernel.\n\n", mib(float64(r.baseline.rssKB)), mib(float64(r.baseline.anonKB)))
		if len(r.pre.samples) > 0 && len(r.chart.samples) > 0 && len(r.post.samples) > 0 {
			fmt.Fprintf(&b, "Check statuses: without a chart %s; with the chart %s. Exit codes: pre %d, with the chart %d, post %d.\n\n",
				statusLine(r.pre.samples[0].statuses), statusLine(r.chart.samples[0].statuses), r.pre.samples[0].code, r.chart.samples[0].code, r.post.samples[0].code)
		}
		for _, n := range r.cheapNotes {
			fmt.Fprintf(&b, "Note: %s.\n\n", n)
		}
	}

	fmt.Fprintf(&b, "## Requests at %dx\n\n", first.factor)
	fmt.Fprintf(&b, "The cheapest-encoding floor's LISTs (from the audit log of the run with the chart):\n\n")
	for _, q := range first.cheapReqs {
		fmt.Fprintf(&b, "- `%s` (%s, %s)\n", q.Path, q.Resource, q.Encoding)
	}
	b.WriteString("\n")
	if len(first.requestsByKind) > 0 {
		fmt.Fprintf(&b, "Requests of one pre-install run with the chart by verb and resource (audit log, pages included):\n\n")
		keys := make([]string, 0, len(first.requestsByKind))
		for k := range first.requestsByKind {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- `%s` × %s\n", k, first.requestsByKind[k])
		}
		b.WriteString("\n")
	}

	b.WriteString("## Per run\n\nPlugin runs: wall s / peak RSS MiB / requests+pages by plugin count; audit requests+pages. Floors and kubectl: wall s / peak RSS MiB.\n\n")
	for _, r := range all {
		fmt.Fprintf(&b, "%s:\n\n", r.sizeLabel())
		for _, s := range r.plugins() {
			fmt.Fprintf(&b, "- %s:", s.name)
			for _, x := range s.samples {
				fmt.Fprintf(&b, " %.2f/%d/%d+%d;%d+%d", x.wall.Seconds(), x.rssKB/1024, x.requests-x.pages, x.pages, x.audit.total-x.audit.pages, x.audit.pages)
			}
			b.WriteString("\n")
		}
		for _, s := range []*series{&r.cheap, &r.floor, &r.kubectl} {
			if len(s.samples) == 0 {
				continue
			}
			fmt.Fprintf(&b, "- %s:", s.name)
			for _, x := range s.samples {
				fmt.Fprintf(&b, " %.2f/%d", x.wall.Seconds(), x.rssKB/1024)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// remotePair is a local series and the same runs through the latency
// proxy, run by run (local[i] just before remote[i]).
type remotePair struct{ local, remote *series }

// difference is the median of the pairs' differences in wall time
// (seconds): remote[i] - local[i].
func (p remotePair) difference() float64 {
	d := series{}
	for i := range min(len(p.local.samples), len(p.remote.samples)) {
		d.samples = append(d.samples, sample{wall: p.remote.samples[i].wall - p.local.samples[i].wall})
	}
	return d.median(wallOf)
}

func (r *results) remoteRows() []remotePair {
	var out []remotePair
	for _, s := range []*series{&r.pre, &r.chart, &r.post, &r.upgrade} {
		if rs, ps := r.remote[s], r.paired[s]; rs != nil && ps != nil && len(rs.samples) > 0 && len(ps.samples) > 0 {
			out = append(out, remotePair{ps, rs})
		}
	}
	return out
}

// remoteTable sets each run's time through the latency proxy beside its
// local time: the difference in round trips is how many requests the run
// waits for one after another.
func remoteTable(r *results) string {
	rows := r.remoteRows()
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Remote mode: the same runs through a TCP proxy on 127.0.0.1 that adds %s to every round trip (half each way), as against an API server that far away, each beside a local run of the same arguments (in every other pair the local run first: the second run of a pair pays for the API server's garbage collection after the first); %d pairs, the difference the median of the pairs' differences (the machine's load drifts over a bench and cancels out within a pair).\n\n", r.rtt, len(rows[0].remote.samples))
	b.WriteString("| run | local (median of the pairs) | remote (median) | difference (median of the pairs) | in round trips | API requests (local / remote) |\n|---|---|---|---|---|---|\n")
	for _, p := range rows {
		l, m, d := p.local.median(wallOf), p.remote.median(wallOf), p.difference()
		fmt.Fprintf(&b, "| %s | %s | %s | %+.2f s | %+.1f | %.0f / %.0f |\n", p.local.name, secs(l), secs(m), d, d/r.rtt.Seconds(), p.local.median(reqsOf), p.remote.median(reqsOf))
	}
	b.WriteString("\n")
	return b.String()
}
