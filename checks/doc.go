// Package checks holds the check registry, the runner and the checks of
// kubectl gitops-preflight.
//
// A check is static metadata (Meta: a stable kebab-case ID that is never
// renamed or reused, a category, the modes it runs in, a title phrased as the
// condition that passes, a docs URL, the severity of its failure and the
// checks it requires) plus a function that reads the cluster through a shared
// read-only snapshot (internal/cluster) and returns a Result.
//
// Adding a check is one file and one line: write `func MyCheck() Check` in
// its own file (with a pass and a fail test), and add `MyCheck()` to All in
// registry.go at the place it should appear in reports. The catalogue and its
// meaning are fixed by README "Checks" and docs/checks.md; every rule's threshold cites the
// public page or source file (URL and section) it comes from.
//
// The runner (Run) executes the selected checks concurrently (bounded), with a
// timeout and panic recovery per check; a check whose prerequisite did not
// pass is skipped with the reason; a Forbidden API error turns a check into a
// skip ("no permission to list nodes"); any other error into `error`.
package checks
