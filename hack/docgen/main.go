// Command docgen writes docs/checks.md from the check registry and
// docs/checks/<id>.md, and rewrites the generated tables of README.md and
// of the pages under docs/ (the checks, from the registry; the flags, from
// the command's cobra flags) between their markers (make docs). See
// internal/docgen.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/docgen"
)

func main() {
	out := flag.String("out", "docs/checks.md", "file to write")
	dir := flag.String("dir", "docs/checks", "directory of the per-check files")
	pages := flag.String("pages", "README.md,docs/*.md", "comma-separated globs of the pages whose generated tables to rewrite (empty: none)")
	flag.Parse()
	if err := run(*out, *dir, *pages); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

func run(out, dir, globs string) error {
	doc, err := docgen.Generate(checks.All(), dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, doc, 0o644); err != nil {
		return err
	}
	if globs == "" {
		return nil
	}
	var pages []docgen.Page
	for _, g := range strings.Split(globs, ",") {
		paths, err := filepath.Glob(g)
		if err != nil {
			return err
		}
		for _, p := range paths {
			if p == out {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			pages = append(pages, docgen.Page{Path: filepath.ToSlash(p), Data: data})
		}
	}
	updated, err := docgen.Pages(pages, checks.All(), docgen.CommandFlags())
	if err != nil {
		return err
	}
	for i, p := range updated {
		if string(p.Data) == string(pages[i].Data) {
			continue
		}
		if err := os.WriteFile(p.Path, p.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
