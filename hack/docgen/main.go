// Command docgen writes docs/checks.md from the check registry and
// docs/checks/<id>.md (make docs). See internal/docgen.
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
	flag.Parse()
	doc, err := docgen.Generate(checks.All(), *dir)
	if err == nil {
		err = os.WriteFile(*out, doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
