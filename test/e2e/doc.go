// Package e2e runs the built plugin binary against a real kube-apiserver and
// etcd (internal/testcluster) and asserts its JSON statuses and exit codes.
//
// The scenarios are the files named after what they cover; what several of
// them share lives in a helper file by concern, and depends on no scenario
// file: helpers_run_test.go (running the plugin and the tools, and judging
// their output: wantCode, wantStatus, the replayed runs), helpers_cluster_test.go
// (the objects a scenario writes and waits for), helpers_chart_test.go (the
// chart, its values and real Helm), helpers_network_test.go (the servers a
// probe reaches) and helpers_bundle_test.go (a bundle's entries).
package e2e
