package cluster

// ReplayKeyHeader is the request header a dry run carries its replay key in
// (internal/dryrun): a bundle identifies the request by it instead of by its
// body, whose Secret data the bundle's redacted values cannot reproduce. The
// recorder removes it before the request leaves the plugin.
const ReplayKeyHeader = "X-Gitops-Preflight-Replay-Key"
