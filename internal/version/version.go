// Package version holds the build's version, set by -ldflags at build time
// (make build sets them from git).
package version

// Build information; "dev"/"unknown" when built without make.
var (
	Version = "dev"
	Commit  = "unknown"
	Date    = "unknown"
)
