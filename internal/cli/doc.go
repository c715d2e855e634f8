// Package cli is the kubectl gitops-preflight command and nothing more, in
// kubectl's Flags -> Options shape: flag groups as types (flags_*.go), each
// declaring its flags with their help section and whether a bundle records
// them (pflag annotations, describe), compiled once into a typed run.Config
// (Flags.ToConfig, after Flags.Validate's cross-flag rules); Options holds
// the compiled run with the console it prints on and Run connects, runs
// the session (internal/run), prints the report and maps the run's verdict
// to the contract's exit codes (exitFor; README "Exit codes"). It never
// touches the process (os.Exit, os.Stdout): main passes streams and host
// hooks in and turns the returned *ExitError into the exit status.
package cli
