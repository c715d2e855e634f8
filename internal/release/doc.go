// Package release builds and checks what the plugin ships: release archives
// (tar.gz, zip), the krew manifest rendered from the krew-release-bot
// template .krew.yaml, and the Helm plugin.yaml.
//
// krew's manifest validator is internal to its module and cannot be imported
// (shared/spec/plugin-conventions.md §6), so ValidateKrewPlugin ports its
// rules (internal/index/validation/validate.go and
// cmd/validate-krew-manifest, krew v0.5.0; plugin-conventions §1.2, §1.3).
package release
