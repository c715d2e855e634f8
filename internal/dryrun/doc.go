// Package dryrun is the plugin's one way of asking the API server what it
// would do with a write: every request that is not a read is sent as a
// server-side dry run (dryRun=All in the query, and in the body of a DELETE
// that has one), so the whole admission chain judges it (mutating and
// validating webhooks, ValidatingAdmissionPolicies, PodSecurity,
// ResourceQuota, LimitRanger, ServiceAccount, RBAC) and nothing is stored.
//
// An Engine sends a batch of requests concurrently, at most Limit (8) in
// flight for the whole run, as one identity: the REST config it is built
// from (the kubeconfig's user, or cli-runtime's --as/--as-group, which
// client-go sends as impersonation headers). Each answer keeps the API
// server's response object (mutated by the webhooks and defaulted), its
// error (a *apierrors.StatusError) and the Warning headers of that request
// (rest.Config.WarningHandlerWithContext, collected per request, never
// printed).
//
// Requests carry a replay key (cluster.ReplayKeyHeader): a digest of the
// request body in which what a bundle redacts (Secret and ConfigMap data,
// checksum annotations computed over them) is blanked, so that a replay,
// which renders the chart from the redacted values, finds the answers the
// live run recorded.
//
// The identity that installs, when it is not the runner's (--installer),
// is read here too: its groups as the API server gives them
// (InstallerGroups) and the impersonate reviews the runner must pass to
// send as it (Impersonations).
package dryrun
