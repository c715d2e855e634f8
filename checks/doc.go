// Package checks holds the check registry, the runner and the checks of
// kubectl gitops-preflight.
//
// A check is static metadata (Meta: a stable kebab-case ID that is never
// renamed or reused, a category, the modes it runs in, a title phrased as the
// condition that passes, a docs URL, the severity of its failure, its impact,
// the checks it requires, whether it is core, reads the chart or is fixable
// and with which --fix options, and where it applies) plus a function that
// reads the cluster through a shared read-only snapshot (internal/cluster)
// and returns a Result. Every attribute the rest of the program needs is on
// Meta: nothing outside this package names a check by its ID.
//
// Adding a check is the four files "Adding a check" (docs/development.md)
// lists: the check file (`func MyCheck() Check`), its line in All
// (registry.go, at the place it should appear in reports), its docs page
// (docs/checks/<id>.md) and its kit test file (<id_with_underscores>_test.go, running MyCheck through the
// kit with a passing and a non-passing outcome); then `make docs`. A check
// reads the planned install only through the typed fields of Inputs
// (plan.Install) and the chart's names from internal/plan; a value the plan
// lacks becomes a field there (the fifth file, only then). Only values.go
// and upgrade_values.go read raw chart values. internal/reporules holds
// these rules as tests. The catalogue and its meaning are fixed by
// README "Checks" and docs/checks.md; every rule's threshold cites the public
// page or source file (URL and section) it comes from.
//
// The runner (Run) executes the selected checks concurrently (bounded), with a
// timeout and panic recovery per check; a check whose prerequisite did not
// pass is skipped with the reason; a Forbidden API error turns a check into a
// skip ("no permission to list nodes"); any other error into `error`. Each
// skip the runner decides carries its SkipCause. Exit codes are not decided
// here: internal/run turns a report into a verdict, internal/cli a verdict
// into an exit code.
package checks
