// Package cli is the kubectl gitops-preflight command: flags, their
// validation into a typed run configuration, the run, and the mapping of
// outcomes to the contract's exit codes (README "Exit codes"). It never
// touches the process (os.Exit, os.Stdout): main passes streams and host
// hooks in and turns the returned *ExitError into the exit status.
package cli
