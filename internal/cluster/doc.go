// Package cluster reads the cluster for the checks.
//
// Clients are built once per run from the kubectl flags (k8s.io/cli-runtime).
// A Snapshot lists each kind of object at most once per run, lazily (only the
// kinds that the selected checks ask for), with paginated LIST calls
// (limit/continue, 500 items a page) and converts every item into a small
// read-only summary as it arrives (Node, Workload, CRD, ...), so that memory
// stays flat on clusters with thousands of objects. Summaries are shared by
// all checks and must never be modified.
//
// Errors keep the API status: a 403 on a list is reported as a *ListError whose
// Forbidden method is true, and the runner turns that into a `skip` ("no
// permission to list nodes") rather than a failure.
package cluster
