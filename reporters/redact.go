package reporters

import (
	"io"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/redact"
)

// Redacted returns a copy of r with every string a reporter prints passed
// through redact.String: each check's message, hint and objects, and the
// cluster's server and context, and the waivers' reasons and owners. Every format goes through it (New wraps each
// reporter), so a credential that reached a message (a Helm release
// description quoting a webhook's denial, a log line, an event) is masked the
// same way in table, JSON, YAML and JUnit. Names of Secrets and keys stay
// readable (see package redact).
func Redacted(r *checks.Report) *checks.Report {
	out := *r
	out.Cluster.Server = redact.String(r.Cluster.Server)
	out.Cluster.Context = redact.String(r.Cluster.Context)
	out.Cluster.Version = redact.String(r.Cluster.Version)
	out.Outcomes = make([]checks.Outcome, len(r.Outcomes))
	for i, o := range r.Outcomes {
		o.Message = redact.String(o.Message)
		o.Hint = redact.String(o.Hint)
		if len(o.Objects) > 0 {
			objs := make([]checks.ObjectRef, len(o.Objects))
			for j, ref := range o.Objects {
				objs[j] = checks.ObjectRef{Kind: ref.Kind, Namespace: redact.String(ref.Namespace), Name: redact.String(ref.Name)}
			}
			o.Objects = objs
		}
		if o.Source != nil {
			s := *o.Source
			s.File, s.Flag = redact.String(s.File), redact.String(s.Flag)
			o.Source = &s
		}
		if o.Waiver != nil {
			w := *o.Waiver
			w.Reason, w.Owner = redact.String(w.Reason), redact.String(w.Owner)
			o.Waiver = &w
		}
		out.Outcomes[i] = o
	}
	if r.Waivers != nil {
		out.Waivers = make([]checks.WaiverUse, len(r.Waivers))
		for i, w := range r.Waivers {
			w.Reason, w.Owner, w.File = redact.String(w.Reason), redact.String(w.Owner), redact.String(w.File)
			out.Waivers[i] = w
		}
	}
	return &out
}

// redacting is the reporter New returns: it redacts, then formats.
type redacting struct{ next Reporter }

func (r redacting) Report(w io.Writer, rep *checks.Report) error {
	return r.next.Report(w, Redacted(rep))
}
