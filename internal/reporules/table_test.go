package reporules

// Module is the project's module path.
const Module = "github.com/gitops-preflight/kubectl-gitops-preflight"

// allowedImports is, for each of the project's packages (path relative to
// Module), the project packages its non-test files may import. A package
// missing from the table may import none of the project's packages. Test
// files are free: they may reach any package to set up a case.
//
// The layers, from the bottom: leaf packages (plan, probe, proc,
// redact, release, version, versionof, mdblock) import nothing of the
// project;
// cluster reads the API server; argocd is Argo CD's Application model,
// finder, `helm template` flags and sync rules (over cluster's reads, the
// values merged with plan's merge); chart renders the chart and reads its
// rules by the names plan declares, an Argo CD sync's render with
// argocd's flags; dryrun is the one engine of the dry runs
// (it knows cluster's NotRecordedError and replay key); webhookmatch is
// the API server's webhook matching (k8s.io/apiserver's, over what a run
// read; it imports none of the project); admission is the plan of what
// Helm sends and how the admission chain answers (through dryrun,
// webhookmatch and mapolicy, the pods it starts sorted by schedule; its
// Refusal is the one refusal type); apply sends Helm's writes through
// dryrun, names refusals with admission's type and holds Helm's ownership
// rule (over cluster's workloads and release records); installed reads
// what the chart rendered into the cluster; checks judge what those read;
// reporters
// print a report; bundle records what a run read (through cluster's
// clients and probe's Tape, redacted with redact) and replays it; fix changes the cluster for a check; run is one run as a
// library call (the --wait rounds, --fix, the verdict, the recording of a
// bundle with the run's spec and the replay of one: it derives the plan
// again from a spec's values, and names the plugin's version in a bundle);
// cli is the command (flags, the report's output, exit codes; it opens the
// file given to replay and prints its hook Jobs, bundle's); cmd is the
// process; hack/ and testcluster are tooling.
var allowedImports = map[string][]string{
	"checks":                       {"internal/admission", "internal/apply", "internal/argocd", "internal/chart", "internal/cluster", "internal/dryrun", "internal/images", "internal/ingressclass", "internal/installed", "internal/mapolicy", "internal/netpol", "internal/plan", "internal/platform", "internal/probe", "internal/proc", "internal/redact", "internal/schedule", "internal/versionof", "internal/webhookmatch"},
	"cmd/kubectl-gitops_preflight": {"internal/cli", "internal/redact"},
	"hack/bench":                   {"internal/cluster", "internal/fixtures", "internal/mdblock", "internal/testcluster"},
	"hack/demo":                    {"internal/fixtures", "internal/testcluster", "reporters"},
	"hack/dist":                    {"internal/image", "internal/release"},
	"hack/fixtures":                {"internal/fixtures"},
	"hack/helmpgo":                 {"internal/fixtures", "internal/testcluster"},
	"hack/docgen":                  {"checks", "internal/docgen"},
	"hack/profile":                 {"internal/cli"},
	"hack/toolcache":               {"internal/toolcache"},
	"internal/cli":                 {"checks", "internal/bundle", "internal/chart", "internal/cluster", "internal/plan", "internal/probe", "internal/run", "internal/version", "reporters"},
	"internal/run":                 {"checks", "internal/argocd", "internal/bundle", "internal/chart", "internal/cluster", "internal/fix", "internal/plan", "internal/probe", "internal/version"},
	"internal/admission":           {"internal/chart", "internal/cluster", "internal/dryrun", "internal/mapolicy", "internal/schedule", "internal/webhookmatch"},
	"internal/apply":               {"internal/admission", "internal/argocd", "internal/cluster", "internal/dryrun"},
	"internal/dryrun":              {"internal/cluster"},
	"internal/cluster":             {"internal/proc"},
	"internal/bundle":              {"internal/cluster", "internal/probe", "internal/redact"},
	"internal/argocd":              {"internal/cluster", "internal/plan"},
	"internal/chart":               {"internal/argocd", "internal/plan"},
	"internal/images":              {"internal/chart", "internal/cluster", "internal/probe"},
	"internal/ingressclass":        {"internal/cluster"},
	"internal/installed":           {"internal/cluster", "internal/plan"},
	"internal/netpol":              {"internal/chart", "internal/cluster", "internal/plan"},
	"internal/schedule":            {"internal/chart", "internal/cluster", "internal/plan"},
	"internal/docgen":              {"checks", "internal/cli", "internal/mdblock"},
	"internal/fix":                 {"checks"},
	"internal/testcluster":         {"checks", "internal/chart", "internal/toolcache", "reporters"},
	"reporters":                    {"checks", "internal/redact"},
}
