package reporters

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// A finding is one outcome the CI formats report: a warn, fail or error,
// or a waived one (reported as such). Passing and skipped checks are not
// findings.
func isFinding(o checks.Outcome) bool {
	switch o.Status {
	case checks.StatusWarn, checks.StatusFail, checks.StatusError, checks.StatusWaived:
		return true
	}
	return false
}

// Fingerprint identifies a finding across runs: the same check on the same
// cluster (context) about the same thing (the values key and file its
// source names, else its objects) has the same fingerprint whatever its
// message, line number or status says, so that a re-run's pull-request
// comment or code-scanning alert updates the earlier one instead of adding
// another. 32 hex digits of a SHA-256.
func Fingerprint(context string, o checks.Outcome) string {
	parts := []string{"gitops-preflight/v1", context, o.ID}
	switch s := o.Source; {
	case s != nil && s.File != "":
		parts = append(parts, "file", filepath.ToSlash(s.File), s.Path)
	case s != nil:
		parts = append(parts, "flag", s.Path, flagName(s.Flag))
	default:
		objs := make([]string, len(o.Objects))
		for i, ref := range o.Objects {
			objs[i] = ref.String()
		}
		slices.Sort(objs)
		parts = append(parts, "objects")
		parts = append(parts, objs...)
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// flagName is a flag source's flag without its value ("--set").
func flagName(flag string) string {
	name, _, _ := strings.Cut(flag, " ")
	return name
}

// artifactURI is a values file as a URI reference for SARIF and GitLab: the
// path as given, with forward slashes and no leading "./" (relative to the
// directory the plugin ran in: the repository's root in CI); an absolute
// path becomes a file:// URI.
func artifactURI(file string) string {
	p := filepath.ToSlash(file)
	if filepath.IsAbs(file) {
		return "file://" + p
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	return p
}

// repoPath is a values file as a path relative to the repository (GitLab's
// location.path, GitHub's file=): artifactURI without a scheme.
func repoPath(file string) string {
	return strings.TrimPrefix(artifactURI(file), "file://")
}

// findingText is a finding's message, then its hint on the next line
// ("→ hint"), then the waiver that covers it.
func findingText(o checks.Outcome) string {
	text := o.Message
	if o.Hint != "" {
		text += "\n→ " + o.Hint
	}
	if w := o.Waiver; w != nil {
		text += "\nwaived (" + string(w.Status) + "): " + w.Reason + ", expires " + w.Expires
	}
	return text
}
