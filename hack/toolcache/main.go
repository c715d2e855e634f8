// Command toolcache prints the folder the tools built for the tests, the
// demo and the linter are kept in (internal/toolcache.Dir), for the
// Makefile: a program of the standard library alone, so that `go run`
// builds it in a moment.
package main

import (
	"fmt"
	"os"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/toolcache"
)

func main() {
	dir, err := toolcache.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolcache:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}
