// Package release builds and checks what the plugin ships: release archives
// (tar.gz, zip), the krew manifest rendered from the krew-release-bot
// template .krew.yaml, and the Helm plugin.yaml.
//
// krew's manifest validator is internal to its module and cannot be imported
// (https://github.com/kubernetes-sigs/krew/tree/v0.5.0/cmd/validate-krew-manifest), so ValidateKrewPlugin ports its
// rules (internal/index/validation/validate.go and
// cmd/validate-krew-manifest, krew v0.5.0; https://github.com/kubernetes-sigs/krew/blob/v0.5.0/internal/index/validation/validate.go).
package release
