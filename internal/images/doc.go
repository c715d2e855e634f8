// Package images resolves what the pods of a chart rendering pull: every
// image reference (chart.Rendering.Images), where the user means them to
// come from (MirrorIntent) and how a mirror plan moves those elsewhere
// (Unmirrored, MirrorCSV), the pull secrets each pod gets and the
// registries they serve (AuthsOf), and each image's manifest at its
// registry (Resolver, through a probe.Prober so that a bundle records the
// answer). It reads the cluster only through the small Cluster interface.
package images
