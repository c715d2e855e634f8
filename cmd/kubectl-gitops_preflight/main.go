// Command kubectl-gitops_preflight is the kubectl (and Helm) plugin
// "kubectl gitops-preflight". This file is the only one that touches the
// process: streams, environment, signals and the exit code.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	host := cli.Host{Getenv: os.Getenv, IsTerminal: isTerminal, IsInputTerminal: isInputTerminal, TerminalWidth: terminalWidth}
	cmd := cli.NewCommand(streams, host)
	err := cmd.ExecuteContext(ctx)
	code := cli.ExitCode(err)
	if err != nil {
		if e := (*cli.ExitError)(nil); !errors.As(err, &e) || e.Err != nil {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		}
	}
	return code
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func isInputTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the column count of the terminal w is, 0 if unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return cols
}
