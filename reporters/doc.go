// Package reporters renders a checks.Report. Reporters are pure functions of
// the report and their options: they never read the cluster, the environment
// or the terminal themselves, so the same report gives the same bytes.
//
// Formats: table (for people; colour only when the caller says the output is
// a terminal), json (the stable contract of README "JSON
// output"), yaml (the same document) and junit (one testcase per check, for
// CI dashboards). The exit code never depends on the format.
package reporters
