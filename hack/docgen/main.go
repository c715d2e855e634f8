// Command docgen writes docs/checks.md from the check registry and
// docs/checks/<id>.md, and rewrites the generated tables of README.md (the
// checks, from the registry; the flags, from the command's cobra flags)
// between their markers (make docs). See internal/docgen.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/docgen"
)

func main() {
	out := flag.String("out", "docs/checks.md", "file to write")
	dir := flag.String("dir", "docs/checks", "directory of the per-check files")
	readme := flag.String("readme", "README.md", "README whose generated tables to rewrite (empty: none)")
	flag.Parse()
	if err := run(*out, *dir, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run(out, dir, readme string) error {
	doc, err := docgen.Generate(checks.All(), dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return err
	}
	if readme == "" {
		return nil
	}
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	updated, err := docgen.Readme(old, checks.All(), docgen.CommandFlags())
	if err != nil {
		return err
	}
	return os.WriteFile(readme, updated, 0o644)
}
