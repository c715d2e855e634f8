// Package reporules holds the repository's layout rules and their tests,
// beside the citation rule (internal/citations): which of the project's
// packages may import which (allowedImports), so that a new edge between
// them is a decision made in review, not an accident; no check ID as a
// string literal outside checks/, and no exported check-ID constant used
// outside it; the plan as the only input of the checks (only the files of
// rawValuesReaders read raw chart values) and what the chart gets only (no
// field of plan.Install says how the run was invoked); one meaning per exit
// number (exit numbers only in the command's exit table, no reporter
// parsing a check's message); and every registered check complete (impact,
// docs page, its own test file); checks/ holding checks (every file but the
// named framework files registers one, and no function there is 80 lines
// or more); and every end-to-end test either in the suite's parallel slots
// (testcluster.Parallel) or saying why it runs alone.
// The import test reads the import graph
// from `go list -json ./...` and names the file that adds an edge the table
// does not allow; the others parse the Go files or reflect on the types.
// Each rule has a test that plants a violation and finds it.
package reporules
