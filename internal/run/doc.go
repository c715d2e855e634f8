// Package run is one run of the checks as a library call, in the shape of
// Helm's pkg/action: a Config of typed inputs (internal/cli's flags compiled
// once), a Session that binds it to a cluster's clients, and Session.Run,
// which reads the cluster, runs the selected checks (rendering the chart
// beside the reads when a selected check reads it), re-runs the failing ones
// while --wait allows, plans and applies --fix (asking through a hook) and
// re-runs what it fixed, and returns the report with its Verdict.
//
// The Verdict is the only place an outcome becomes one: OK, Failed,
// Unreachable, Interrupted or NothingVerified. The command maps it to an
// exit code (internal/cli) and prints the report; nothing here writes to
// the process's streams except through the hooks of Config.
package run
