package run

import (
	"fmt"
	"path"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// Waiver is one entry of a --waivers file: a known, accepted finding. It
// covers a warn, fail or error of check Check when the run's kubeconfig
// context matches Context, the runtime namespace matches Namespace and every
// object of the result matches one of Objects (globs of path.Match; an empty
// glob matches anything), through the day Expires (UTC).
type Waiver struct {
	// File and Index (1-based) name the waiver in messages.
	File  string `json:"file"`
	Index int    `json:"index"`
	Check string `json:"check"`
	// Reason says why the finding is accepted; Owner who accepted it ("" when
	// not given).
	Reason string `json:"reason"`
	Owner  string `json:"owner,omitempty"`
	// Expires is the waiver's last valid day, at 00:00 UTC.
	Expires time.Time `json:"expires"`
	// Context and Namespace are globs ("" matches every context or namespace).
	Context   string `json:"context,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Objects are globs of "Kind/name" (cluster-scoped) or
	// "Kind/namespace/name" (namespaced); nil covers any objects.
	Objects []string `json:"objects,omitempty"`
}

// waiverEntry is the YAML shape of one waiver; unknown fields are errors.
type waiverEntry struct {
	Check     string   `json:"check"`
	Reason    string   `json:"reason"`
	Expires   string   `json:"expires"`
	Owner     string   `json:"owner,omitempty"`
	Context   string   `json:"context,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Objects   []string `json:"objects,omitempty"`
}

// dateLayout is the form of a waiver's expires: a day, YYYY-MM-DD.
const dateLayout = "2006-01-02"

// ParseWaivers reads and validates the content of a --waivers file: a YAML
// list of waivers (check, reason and expires required; owner, context,
// namespace, objects optional). name is how reports and errors call the
// file (a replay names the recorded run's path, not its temporary copy).
// Every check must be in reg. The error, one line, names the file and the
// waiver (index and check) at fault: a malformed file, an unknown field, a
// missing field, a bad date, a bad glob, an unknown check ID or a fatal
// check (cluster-reachable: an unreachable cluster is exit 3 whatever the
// waivers say).
func ParseWaivers(name string, data []byte, reg *checks.Registry) ([]Waiver, error) {
	var entries []waiverEntry
	if err := yaml.UnmarshalStrict(data, &entries); err != nil {
		return nil, fmt.Errorf("--waivers %s: want a YAML list of waivers (check, reason, expires, owner, context, namespace, objects): %s", name, oneLine(err.Error()))
	}
	out := make([]Waiver, 0, len(entries))
	for i, e := range entries {
		w := Waiver{File: name, Index: i + 1, Check: e.Check, Reason: strings.TrimSpace(e.Reason), Owner: e.Owner,
			Context: e.Context, Namespace: e.Namespace, Objects: e.Objects}
		bad := func(format string, args ...any) error {
			label := fmt.Sprintf("waiver %d", w.Index)
			if e.Check != "" {
				label += " (" + e.Check + ")"
			}
			return fmt.Errorf("--waivers %s: %s: %s", name, label, fmt.Sprintf(format, args...))
		}
		switch {
		case e.Check == "":
			return nil, bad("check is required")
		case w.Reason == "":
			return nil, bad("reason is required")
		case e.Expires == "":
			return nil, bad("expires is required (a day, YYYY-MM-DD)")
		}
		c, ok := reg.Get(e.Check)
		if !ok {
			return nil, bad("%v", &checks.UnknownIDError{ID: e.Check, Known: reg.IDs()})
		}
		if c.Fatal {
			return nil, bad("%s cannot be waived: every other check needs the cluster", e.Check)
		}
		expires, err := time.Parse(dateLayout, e.Expires)
		if err != nil {
			return nil, bad("expires %q is not a day YYYY-MM-DD", e.Expires)
		}
		w.Expires = expires
		for _, g := range append([]string{e.Context, e.Namespace}, e.Objects...) {
			if _, err := path.Match(g, ""); err != nil {
				return nil, bad("bad glob %q: %v", g, err)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Expired reports whether now is after the waiver's last valid day (UTC).
func (w Waiver) Expired(now time.Time) bool {
	return !now.UTC().Before(w.Expires.AddDate(0, 0, 1))
}

// Covers reports whether the waiver is about outcome o of a run on the
// kubeconfig context and runtime namespace given, expiry aside: same check,
// a warn, fail or error, context and namespace globs matching, and every
// object of o matched by one of Objects (when Objects is given, a result
// naming no object is not covered).
func (w Waiver) Covers(o checks.Outcome, context, namespace string) bool {
	if o.ID != w.Check || !waivable(o.Status) || !glob(w.Context, context) || !glob(w.Namespace, namespace) {
		return false
	}
	if w.Objects == nil {
		return true
	}
	if len(o.Objects) == 0 {
		return false
	}
	for _, obj := range o.Objects {
		covered := false
		for _, g := range w.Objects {
			if glob(g, obj.String()) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

func waivable(s checks.Status) bool {
	return s == checks.StatusWarn || s == checks.StatusFail || s == checks.StatusError
}

// glob matches s against pattern (path.Match); "" matches anything.
func glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, s) // patterns were checked by ParseWaivers
	return ok
}

// applyWaivers returns outcomes with those a valid waiver covers set to
// waived (by the first such waiver, in file order), and what became of each
// waiver: applied, expired (whether or not it would cover anything) or
// unmatched. Outcomes already waived are judged again from the status they
// covered, so applying twice (each --wait round, then the run's end) gives
// the same result. now decides expiry; context and namespace are the run's.
// outcomes is not modified.
func applyWaivers(outcomes []checks.Outcome, waivers []Waiver, context, namespace string, now time.Time) ([]checks.Outcome, []checks.WaiverUse) {
	if waivers == nil {
		return outcomes, nil
	}
	orig := make([]checks.Outcome, len(outcomes))
	for i, o := range outcomes {
		if o.Waiver != nil {
			o.Status, o.Waiver = o.Waiver.Status, nil
		}
		orig[i] = o
	}
	out := make([]checks.Outcome, len(orig))
	copy(out, orig)
	uses := make([]checks.WaiverUse, len(waivers))
	for i, w := range waivers {
		u := checks.WaiverUse{File: w.File, Index: w.Index, Check: w.Check, Reason: w.Reason,
			Expires: w.Expires.Format(dateLayout), Owner: w.Owner, State: checks.WaiverUnmatched}
		if w.Expired(now) {
			u.State = checks.WaiverExpired
			uses[i] = u
			continue
		}
		for j := range orig {
			if !w.Covers(orig[j], context, namespace) {
				continue
			}
			u.State = checks.WaiverApplied
			if o := &out[j]; o.Waiver == nil {
				o.Waiver = &checks.Waived{Reason: w.Reason, Owner: w.Owner, Expires: u.Expires, Status: o.Status}
				o.Status = checks.StatusWaived
			}
		}
		uses[i] = u
	}
	return out, uses
}
