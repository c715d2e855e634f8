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
	"k8s.io/klog/v2"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/redact"
)

func main() {
	os.Exit(run())
}

func run() int {
	// client-go logs through klog to stderr ("unable to cancel request",
	// throttling notes): the report and the one-line error are all that
	// stderr carries.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)

	// The first SIGINT or SIGTERM cancels the run: requests and child
	// processes stop, the report of what was checked is printed, and the exit
	// code is the signal's (the command's exit table; 3 when the cluster was
	// never reached). A second one exits at once.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s := <-sigs
		in := &cli.Interrupted{Signal: "SIGINT"}
		if s == syscall.SIGTERM {
			in = &cli.Interrupted{Signal: "SIGTERM"}
		}
		cancel(in)
		<-sigs
		os.Exit(cli.ExitCode(in))
	}()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	host := cli.Host{Getenv: os.Getenv, IsTerminal: isTerminal, IsInputTerminal: isInputTerminal, TerminalWidth: terminalWidth}
	cmd := cli.NewCommand(streams, host)
	err := cmd.ExecuteContext(ctx)
	code := cli.ExitCode(err)
	if err != nil {
		if e := (*cli.ExitError)(nil); !errors.As(err, &e) || e.Err != nil {
			width := 0
			if isTerminal(os.Stderr) {
				if width = terminalWidth(os.Stderr); width <= 0 {
					width = 80
				}
			}
			fmt.Fprint(os.Stderr, cli.ErrorText(redact.String(err.Error()), width))
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
