// Package cli is the kubectl gitops-preflight command and nothing more: its
// flags, their validation into a typed run.Config (Complete), the run's
// hooks (the progress line, the --fix plan's writer and confirmation), the
// report's output, and the mapping of the run's verdict to the contract's
// exit codes (exitFor; README "Exit codes"). The run itself is
// internal/run. It never touches the process (os.Exit, os.Stdout): main
// passes streams and host hooks in and turns the returned *ExitError into
// the exit status.
package cli
