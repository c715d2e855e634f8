// Package reporules holds the repository's layout rules and their tests,
// beside the citation rule (internal/citations): which of the project's
// packages may import which (allowedImports), so that a new edge between
// them is a decision made in review, not an accident. The test reads the
// import graph from `go list -json ./...` and names the file that adds an
// edge the table does not allow.
package reporules
