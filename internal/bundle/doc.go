// Package bundle records what one run of the checks read (--bundle FILE) and
// plays it back with no cluster (replay FILE).
//
// A run reads through four boundaries, and a bundle keeps each:
//
//   - the API server: every HTTP exchange of the run's clients (method,
//     request URI, Accept header and a sha256 of the request body, which
//     identify the request; status, content type and body of the answer),
//     recorded by a RoundTripper (Recorder.Wrap) and served back by another
//     (Bundle.RESTConfig), which answers a request never recorded with an
//     error, never a connection;
//   - the network probes (probe.Tape): each TLS handshake, HTTP probe and DNS
//     lookup result;
//   - the host: the environment variables the checks read, the programs
//     they looked up on PATH and the output of those they ran (helm version);
//   - the inputs: the packaged chart, and the run as it was compiled
//     (Manifest.Spec, internal/run's Spec: the effective chart values among
//     it); a bundle of format 1 kept the run's flags instead, with the
//     values and the --waivers file as entries of their own.
//
// Secrets are redacted before anything is written (see Redact): a Secret's
// data values, secret-looking chart values, and in Helm release records the
// values and the Secrets of the manifests, the record staying decodable.
//
// The file is a gzip'd tar: manifest.json (Manifest: the format version, the
// plugin version, the time, the kubeconfig context, the server and its
// version, the mode, the spec and the sha256 of every other entry), then the
// entries. Open refuses, in one line, a bundle of a newer format, a truncated
// or tampered one (an entry whose sha256 differs, missing or unlisted) and
// one over MaxSize uncompressed.
//
// A run over many clusters (--contexts, --all-contexts) writes one fleet
// archive (FleetWriter): a gzip'd tar of fleet.json (FleetManifest: the
// fleet format version, the plugin version, the time, the mode, the spec,
// the contexts in order, each with the sha256 of its entry or why it has
// none), then each checked cluster's bundle, exactly as above, as the
// entry clusters/<context>.tar.gz (FleetEntryName). Each bundle is
// written to a file as its cluster's session ends, and the archive is
// assembled from the files, so a fleet's recording holds one bundle in
// memory at a time; it is at most MaxSize per cluster uncompressed, plus
// fleet.json. OpenFleet refuses, in one line, what Open refuses, at the
// archive's level, and keeps each bundle in a file until Fleet.Bundle
// opens it.
package bundle
