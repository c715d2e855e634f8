package e2e

import (
	"encoding/base64"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// fleetKubeconfig writes one kubeconfig with a context (and its own cluster
// and user entries) for each kubeconfig file of clusters, named by the
// map's keys, plus the context "closed" whose server is a 127.0.0.1 port
// nothing listens on and the context "badcert" whose user's client
// certificate file does not exist (client-go rejects the entry: exit 2 in
// its own entry). It returns its path and the server of each context.
func fleetKubeconfig(t *testing.T, clusters map[string]string) (string, map[string]string) {
	t.Helper()
	merged := clientcmdapi.NewConfig()
	servers := map[string]string{}
	for name, file := range clusters {
		cfg, err := clientcmd.LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		merged.Clusters[name] = cfg.Clusters[cur.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
		servers[name] = cfg.Clusters[cur.Cluster].Server
	}
	// A port that was free a moment ago: connecting is refused at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	_ = l.Close()
	merged.Clusters["closed"] = &clientcmdapi.Cluster{Server: closed, InsecureSkipTLSVerify: true}
	merged.AuthInfos["closed"] = &clientcmdapi.AuthInfo{Token: "closed-port-token"}
	merged.Contexts["closed"] = &clientcmdapi.Context{Cluster: "closed", AuthInfo: "closed"}
	servers["closed"] = closed
	missing := filepath.Join(t.TempDir(), "missing")
	merged.AuthInfos["badcert"] = &clientcmdapi.AuthInfo{ClientCertificate: missing + ".crt", ClientKey: missing + ".key"}
	merged.Contexts["badcert"] = &clientcmdapi.Context{Cluster: "closed", AuthInfo: "badcert"}
	merged.CurrentContext = "closed"
	p := filepath.Join(t.TempDir(), "fleet.kubeconfig")
	if err := clientcmd.WriteToFile(*merged, p); err != nil {
		t.Fatal(err)
	}
	return p, servers
}

// fleetJSON decodes a fleet run's stdout as the fleet contract, strictly.
func fleetJSON(t *testing.T, res tc.Result) reporters.FleetDocument {
	t.Helper()
	doc := res.FleetJSON(t)
	if doc.SchemaVersion != "v1" {
		t.Errorf("schemaVersion %q", doc.SchemaVersion)
	}
	return doc
}

// TestFleet: --all-contexts and --contexts through the built binary over one
// kubeconfig naming three real control planes and a closed port. All three
// are bare (etcd and kube-apiserver): the state under test is a node, or none,
// written by the test, and nothing needs to reconcile. "empty" has no node
// (node-resources fails), "nodes" has one big enough (it passes), "small"
// has one too small (node-resources fails naming it), "closed"
// is unreachable: exit 3 in its own entry, "badcert" names a missing
// client certificate: exit 2 in its own entry, while the others complete,
// and the process exits with the highest code. Each entry names its context's
// own server, and the API servers' audit logs show that each was sent
// requests only with its own context's user, and only when selected.
func TestFleet(t *testing.T) {
	tc.Parallel(t)
	// The three start at once: about the time of one.
	started := tc.StartBareAuditedN(t, 3)
	empty, nodes, small := started[0], started[1], started[2]
	nodes.AddNode(t, tc.NodeSpec{Name: "big", CPU: "8", Memory: "32Gi"})
	small.AddNode(t, tc.NodeSpec{Name: "tiny", CPU: "1", Memory: "2Gi"})
	// A leftover runtime token in small's runtime namespace: the --bundle
	// run reads the Secret (leftover-runtime-token), and its value must be
	// in no byte of the archive.
	plantFleetSecret(t, small)
	clusters := map[string]*tc.Cluster{"empty": empty, "nodes": nodes, "small": small}
	// A user of its own per context, so that the audit logs say whose
	// credentials each request carried.
	kubeconfig, servers := fleetKubeconfig(t, map[string]string{
		"empty": empty.UserKubeconfig(t, "fleet-empty", "system:masters"),
		"nodes": nodes.UserKubeconfig(t, "fleet-nodes", "system:masters"),
		"small": small.UserKubeconfig(t, "fleet-small", "system:masters"),
	})
	// pluginEvents are the audit events of the plugin's requests.
	pluginEvents := func(c *tc.Cluster) []tc.AuditEvent {
		var out []tc.AuditEvent
		for _, e := range c.AuditEvents(t) {
			if strings.HasPrefix(e.UserAgent, "kubectl-gitops_preflight") {
				out = append(out, e)
			}
		}
		return out
	}
	base := []string{"--kubeconfig", kubeconfig, "--only", "node-resources", "--timeout", "60s"}
	run := func(t *testing.T, args ...string) tc.Result {
		t.Helper()
		return tc.Run(t, nil, append(append([]string(nil), base...), args...)...)
	}
	entry := func(t *testing.T, doc reporters.FleetDocument, ctx string) reporters.FleetEntryDocument {
		t.Helper()
		for _, e := range doc.Fleet {
			if e.Context == ctx {
				if e.Report == nil {
					t.Fatalf("entry %s has no report: %+v", ctx, e)
				}
				if e.Report.Cluster.Context != ctx || e.Report.Cluster.Server != servers[ctx] {
					t.Errorf("entry %s reports cluster %+v, want its own server %s", ctx, e.Report.Cluster, servers[ctx])
				}
				return e
			}
		}
		t.Fatalf("no entry for context %s in %+v", ctx, doc.Fleet)
		return reporters.FleetEntryDocument{}
	}

	t.Run("all contexts as JSON: per-cluster results, the closed one exit 3, process exit the highest", func(t *testing.T) {
		res := run(t, "--all-contexts", "-o", "json")
		wantCode(t, res, 3)
		doc := fleetJSON(t, res)
		var order []string
		for _, e := range doc.Fleet {
			order = append(order, e.Context)
		}
		if strings.Join(order, ",") != "badcert,closed,empty,nodes,small" {
			t.Errorf("fleet order %v, want the contexts sorted", order)
		}
		e := entry(t, doc, "empty")
		if e.Exit != 1 {
			t.Errorf("empty: exit %d, want 1", e.Exit)
		}
		wantStatus(t, *e.Report, "node-resources", "fail")
		wantStatus(t, *e.Report, "cluster-reachable", "pass")
		n := entry(t, doc, "nodes")
		if n.Exit != 0 {
			t.Errorf("nodes: exit %d, want 0", n.Exit)
		}
		wantStatus(t, *n.Report, "node-resources", "pass", "big")
		s := entry(t, doc, "small")
		if s.Exit != 1 {
			t.Errorf("small: exit %d, want 1", s.Exit)
		}
		wantStatus(t, *s.Report, "node-resources", "fail", "tiny")
		wantStatus(t, *s.Report, "cluster-reachable", "pass")
		c := entry(t, doc, "closed")
		if c.Exit != 3 {
			t.Errorf("closed: exit %d, want 3", c.Exit)
		}
		wantStatus(t, *c.Report, "cluster-reachable", "fail")
		wantStatus(t, *c.Report, "node-resources", "skip")
		if b := doc.Fleet[0]; b.Exit != 2 || b.Report != nil || !strings.Contains(b.Error, "kubeconfig context badcert: ") || !strings.Contains(b.Error, "unable to read client-cert") {
			t.Errorf("badcert: %+v, want exit 2, no report and client-go's reason", b)
		}
		if doc.Summary.Clusters.Total != 5 || doc.Summary.Clusters.ByExit["0"] != 1 || doc.Summary.Clusters.ByExit["1"] != 2 ||
			doc.Summary.Clusters.ByExit["2"] != 1 || doc.Summary.Clusters.ByExit["3"] != 1 {
			t.Errorf("summary clusters = %+v", doc.Summary.Clusters)
		}
		if doc.Summary.Fail != 3 || doc.Summary.Pass != 4 {
			t.Errorf("summary = %+v, want 3 fail (node-resources on empty and small, cluster-reachable on closed) and 4 pass", doc.Summary.SummaryDocument)
		}
		if strings.Contains(res.Stdout, "closed-port-token") || strings.Contains(res.Stderr, "closed-port-token") {
			t.Error("the kubeconfig's token is in the output")
		}
	})

	t.Run("each cluster's requests reached only its own API server, with its own user", func(t *testing.T) {
		for name, c := range clusters {
			evs := pluginEvents(c)
			if len(evs) == 0 {
				t.Fatalf("%s: no request of the plugin in the audit log", name)
			}
			for _, e := range evs {
				if e.User != "fleet-"+name {
					t.Errorf("%s: request %s by user %q, want only fleet-%s", name, e.RequestURI, e.User, name)
				}
			}
		}
		before := map[string]int{}
		for name, c := range clusters {
			before[name] = len(pluginEvents(c))
		}
		wantCode(t, run(t, "--contexts", "nodes,small", "-o", "json"), 1)
		if n := len(pluginEvents(empty)); n != before["empty"] {
			t.Errorf("--contexts nodes,small sent %d requests to the empty cluster", n-before["empty"])
		}
		for _, name := range []string{"nodes", "small"} {
			if len(pluginEvents(clusters[name])) == before[name] {
				t.Errorf("--contexts nodes,small sent no request to the %s cluster", name)
			}
		}
	})

	t.Run("contexts in the order given; exit the highest of those", func(t *testing.T) {
		res := run(t, "--contexts", "nodes,empty", "-o", "json", "--parallel", "1")
		wantCode(t, res, 1)
		doc := fleetJSON(t, res)
		if len(doc.Fleet) != 2 || doc.Fleet[0].Context != "nodes" || doc.Fleet[1].Context != "empty" {
			t.Fatalf("fleet = %+v, want nodes then empty", doc.Fleet)
		}
		entry(t, doc, "nodes")
		entry(t, doc, "empty")
		res = run(t, "--contexts", "nodes", "-o", "json")
		wantCode(t, res, 0)
	})

	t.Run("a waiver's context glob is each cluster's own context", func(t *testing.T) {
		future := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
		p := filepath.Join(t.TempDir(), "waivers.yaml")
		if err := os.WriteFile(p, []byte("- check: node-resources\n  reason: lab cluster without nodes\n  expires: "+future+"\n  context: emp*\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		res := run(t, "--contexts", "empty,nodes", "-o", "json", "--waivers", p)
		wantCode(t, res, 0)
		doc := fleetJSON(t, res)
		wantStatus(t, *entry(t, doc, "empty").Report, "node-resources", "waived")
		if w := entry(t, doc, "nodes").Report.Waivers; len(w) != 1 || w[0].Status != "unmatched" {
			t.Errorf("nodes: waivers %+v, want the one waiver unmatched", w)
		}
	})

	t.Run("table: one matrix of checks by clusters, then each cluster's failures", func(t *testing.T) {
		res := run(t, "--all-contexts")
		wantCode(t, res, 3)
		for _, re := range []string{
			`(?m)^CHECK\s+badcert\s+closed\s+empty\s+nodes\s+small$`,
			`(?m)^cluster-reachable\s+✖\s+✔\s+✔\s+✔$`,
			`(?m)^node-resources\s+–\s+✖\s+✔\s+✖$`,
			`(?m)^exit\s+2\s+3\s+1\s+0\s+1$`,
			`(?m)^context badcert: exit 2, not checked: kubeconfig context\s+badcert: invalid configuration`,
			`(?m)^context empty, server ` + regexp.QuoteMeta(servers["empty"]) + `, Kubernetes v[0-9.]+: exit 1$`,
			`(?m)^  ✖ fail   node-resources`,
			`(?m)^context small, server ` + regexp.QuoteMeta(servers["small"]) + `, Kubernetes v[0-9.]+: exit 1$`,
			`(?m)^Summary: 5 clusters: 1 exit 0 \(ok\), 2 exit 1 \(failed\), 1 exit 2 \(not checked\),\s+1 exit 3 \(unreachable\)$`,
		} {
			if !regexp.MustCompile(re).MatchString(res.Stdout) {
				t.Errorf("table output does not match %s:\n%s", re, res.Stdout)
			}
		}
		for _, l := range strings.Split(res.Stdout, "\n") {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("line of %d columns when piped (want at most 80): %q", n, l)
			}
		}
	})

	t.Run("--upgrade over the fleet: a report per cluster in upgrade mode, the deployed chart row and the waves", func(t *testing.T) {
		// No release is installed on either cluster: release-upgradable
		// fails on both, and both are blocked by it (empty by
		// node-resources too). A cluster that needs a step first is in
		// reporters' TestFleetUpgradeWaves: none of the fixture charts'
		// versions needs one.
		up := func(args ...string) tc.Result {
			return tc.Run(t, nil, append([]string{"--kubeconfig", kubeconfig, "--timeout", "60s", "--contexts", "empty,nodes", "--upgrade"}, args...)...)
		}
		res := up("-o", "json")
		wantCode(t, res, 1)
		doc := fleetJSON(t, res)
		for _, ctx := range []string{"empty", "nodes"} {
			e := entry(t, doc, ctx)
			if e.Report.Mode != "upgrade" || e.Exit != 1 {
				t.Errorf("%s: mode %q exit %d, want upgrade and 1", ctx, e.Report.Mode, e.Exit)
			}
			wantStatus(t, *e.Report, "release-upgradable", "fail")
		}
		res = up()
		wantCode(t, res, 1)
		for _, re := range []string{
			`(?m)^kubectl gitops-preflight: upgrade checks on 2 clusters$`,
			`(?m)^deployed chart\s*$`,
			`(?m)^Upgrade waves:\n  blocked: empty \(by node-resources, release-upgradable\), nodes \(by\s+release-upgradable\)$`,
		} {
			if !regexp.MustCompile(re).MatchString(res.Stdout) {
				t.Errorf("table output does not match %s:\n%s", re, res.Stdout)
			}
		}
	})

	t.Run("--post over the fleet: a post-install report per cluster", func(t *testing.T) {
		// No runtime is installed: release-deployed fails on both.
		res := tc.Run(t, nil, "--kubeconfig", kubeconfig, "--timeout", "60s", "--contexts", "nodes,empty", "--post", "-o", "json")
		wantCode(t, res, 1)
		doc := fleetJSON(t, res)
		for _, ctx := range []string{"empty", "nodes"} {
			e := entry(t, doc, ctx)
			if e.Report.Mode != "post" || e.Exit != 1 {
				t.Errorf("%s: mode %q exit %d, want post and 1", ctx, e.Report.Mode, e.Exit)
			}
			wantStatus(t, *e.Report, "release-deployed", "fail")
		}
	})

	t.Run("JUnit: one suite per cluster", func(t *testing.T) {
		res := run(t, "--all-contexts", "-o", "junit")
		wantCode(t, res, 3)
		var doc struct {
			Suites []struct {
				Name     string `xml:"name,attr"`
				Failures int    `xml:"failures,attr"`
				Errors   int    `xml:"errors,attr"`
				Props    []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal([]byte(res.Stdout), &doc); err != nil {
			t.Fatalf("not JUnit XML: %v\n%s", err, res.Stdout)
		}
		if len(doc.Suites) != 5 {
			t.Fatalf("%d suites, want 5:\n%s", len(doc.Suites), res.Stdout)
		}
		if s := doc.Suites[0]; s.Name != "gitops-preflight pre-install (badcert)" || s.Errors != 1 {
			t.Errorf("suite 0: %q with %d errors, want badcert's, its one error the kubeconfig's", s.Name, s.Errors)
		}
		want := map[string]int{"closed": 1, "empty": 1, "nodes": 0, "small": 1}
		for i, ctx := range []string{"closed", "empty", "nodes", "small"} {
			i++ // after badcert
			s := doc.Suites[i]
			if s.Name != "gitops-preflight pre-install ("+ctx+")" || s.Failures != want[ctx] {
				t.Errorf("suite %d: name %q, %d failures; want context %s, %d", i, s.Name, s.Failures, ctx, want[ctx])
			}
			found := false
			for _, p := range s.Props {
				found = found || (p.Name == "cluster.server" && p.Value == servers[ctx])
			}
			if !found {
				t.Errorf("suite %s lacks cluster.server %s: %+v", ctx, servers[ctx], s.Props)
			}
		}
	})

	t.Run("--bundle over the fleet: one archive, replayed with no cluster to the same fleet JSON and exit", func(t *testing.T) {
		live, doc, file := tc.RunFleetJSONReplayed(t, nil, append(append([]string(nil), base...), "--all-contexts", "--only", "leftover-runtime-token")...)
		wantCode(t, live, 3)
		// The Secret was read: its check judged it, on small only.
		if c := tc.Check(t, *entry(t, doc, "small").Report, "leftover-runtime-token"); !strings.Contains(c.Message, "codefresh-token") {
			t.Errorf("small: leftover-runtime-token %s (%s), want it to have read the planted Secret", c.Status, c.Message)
		}
		// Every byte, the clusters' bundles uncompressed too.
		body := untarredDeep(t, file)
		if !strings.Contains(body, `"fleet.json"`) && !strings.Contains(body, `"kind": "fleet"`) {
			t.Error("no fleet manifest in the archive")
		}
		for _, ctx := range []string{"closed", "empty", "nodes", "small"} {
			if !strings.Contains(body, `"bundle": "clusters/`+ctx+`.tar.gz"`) {
				t.Errorf("no bundle of %s listed in the fleet manifest", ctx)
			}
		}
		if !strings.Contains(body, "unable to read client-cert") {
			t.Error("badcert's error is not in the fleet manifest")
		}
		for _, secret := range []string{plantedFleetToken, base64.StdEncoding.EncodeToString([]byte(plantedFleetToken)), "closed-port-token"} {
			if strings.Contains(body, secret) {
				t.Errorf("%q is in the fleet archive", secret)
			}
		}
		t.Run("replay flags apply to the archive: --only, -o junit, -o table, --waivers", func(t *testing.T) {
			res := tc.Run(t, []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "none")}, "replay", file, "--only", "node-resources", "-o", "junit")
			wantCode(t, res, 3)
			if strings.Count(res.Stdout, "<testsuite ") != 5 || strings.Contains(res.Stdout, "leftover-runtime-token") {
				t.Errorf("replay --only node-resources -o junit:\n%s", res.Stdout)
			}
			res = tc.Run(t, nil, "replay", file, "-o", "table")
			wantCode(t, res, 3)
			if !regexp.MustCompile(`(?m)^CHECK\s+badcert\s+closed\s+empty\s+nodes\s+small$`).MatchString(res.Stdout) {
				t.Errorf("replay -o table is not the fleet matrix:\n%s", res.Stdout)
			}
			future := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
			p := filepath.Join(t.TempDir(), "waivers.yaml")
			if err := os.WriteFile(p, []byte("- check: node-resources\n  reason: lab cluster without nodes\n  expires: "+future+"\n  context: emp*\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			res = tc.Run(t, nil, "replay", file, "-o", "json", "--waivers", p)
			wantCode(t, res, 3)
			wantStatus(t, *entry(t, res.FleetJSON(t), "empty").Report, "node-resources", "waived")
		})
		t.Run("a tampered archive: one line, exit 2", func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cut := filepath.Join(t.TempDir(), "cut.tgz")
			if err := os.WriteFile(cut, b[:len(b)/2], 0o600); err != nil {
				t.Fatal(err)
			}
			res := tc.Run(t, nil, "replay", cut, "-o", "json")
			wantCode(t, res, 2)
			if !strings.Contains(res.Stderr, "truncated") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 || res.Stdout != "" {
				t.Errorf("stderr %q, stdout %q", res.Stderr, res.Stdout)
			}
		})
	})

	for _, bad := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"an unknown context", []string{"--contexts", "empty,missing"}, `no context "missing" in the kubeconfig`},
		{"--context with --contexts", []string{"--contexts", "empty", "--context", "nodes"}, "--contexts and --context"},
		{"--contexts with --all-contexts", []string{"--contexts", "empty", "--all-contexts"}, "--contexts and --all-contexts"},
		{"--fix", []string{"--all-contexts", "--fix", "--yes", "--only", "argo-crds-ownership"}, "--fix changes one cluster at a time"},
		{"--fix with --bundle", []string{"--all-contexts", "--fix", "--yes", "--bundle", filepath.Join(t.TempDir(), "x.tgz")}, "--fix changes one cluster at a time"},
		{"--parallel 0", []string{"--all-contexts", "--parallel", "0"}, "--parallel must be at least 1"},
	} {
		t.Run("usage error: "+bad.name, func(t *testing.T) {
			res := run(t, bad.args...)
			wantCode(t, res, 2)
			if !strings.Contains(res.Stderr, bad.wantErr) || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
				t.Errorf("stderr %q: want one line containing %q", res.Stderr, bad.wantErr)
			}
			if res.Stdout != "" {
				t.Errorf("stdout not empty on usage error: %q", res.Stdout)
			}
		})
	}
}
