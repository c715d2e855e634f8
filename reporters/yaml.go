package reporters

import (
	"io"

	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// YAML renders the report as the same Document as JSON (README "JSON
// output"), in YAML: sigs.k8s.io/yaml converts through the JSON tags, so the
// field names, their order within a check and the always-present fields are
// those of -o json.
type YAML struct{}

// Report writes the report as one YAML document.
func (YAML) Report(w io.Writer, r *checks.Report) error {
	out, err := yaml.Marshal(NewDocument(r))
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
