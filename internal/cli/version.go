package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/version"
)

// VersionInfo is what `version -o json|yaml` prints. Version, Commit and Date
// come from internal/version (set by `make build` -ldflags from git).
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// CurrentVersion returns this binary's build information.
func CurrentVersion() VersionInfo {
	return VersionInfo{
		Version:   version.Version,
		Commit:    version.Commit,
		Date:      version.Date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// writeVersion prints v for people (name is the command's display name,
// "kubectl gitops-preflight" or "helm gitops-preflight"), or as json/yaml.
func writeVersion(w io.Writer, name, format string, v VersionInfo) error {
	switch format {
	case "", "text":
		_, err := fmt.Fprintf(w, "%s %s\n  commit: %s\n  built:  %s\n  go:     %s %s\n", name, v.Version, v.Commit, v.Date, v.GoVersion, v.Platform)
		return err
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	default:
		return usageError("version: unknown output format %q (want text, json or yaml)", format)
	}
}

// newVersionCommand is `version [-o text|json|yaml]`.
func newVersionCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout(), cmd.Root().DisplayName(), format, CurrentVersion())
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text|json|yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
