package cli

import (
	"context"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/pflag"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// imagesFlags are the flags of the image checks: the mirror the images
// should come from and whether to ask the registries.
type imagesFlags struct {
	// options are the image checks' options as given: ToConfig trims the
	// mirror.
	options checks.ImageOptions
}

// AddFlags declares --registry-mirror and --registry-check.
func (f *imagesFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.options.Mirror, "registry-mirror", "", "the private registry every image should be pulled from, HOST[/PREFIX]: image-plan names each image elsewhere and the value that moves it (default: global.imageRegistry when set)")
	fs.BoolVar(&f.options.RegistryCheck, "registry-check", false, "image-registry: resolve each image's manifest at its registry (dials the registries, through --connect-to) with the pods' pull secrets or the local Docker config")
	describe(fs, "registry-mirror", placement{sectionPlan, 20}, recorded)
	describe(fs, "registry-check", placement{sectionPlan, 21}, recorded)
}

// Validate checks that --registry-mirror is a repository prefix,
// HOST[/PREFIX], without a scheme.
func (f *imagesFlags) Validate() error {
	m := f.mirrorPrefix()
	if m == "" {
		return nil
	}
	if strings.Contains(m, "://") {
		return usageError("--registry-mirror is HOST[/PREFIX], without a scheme: not %q", f.options.Mirror)
	}
	// A mirror is a repository prefix: it must parse as one.
	if _, err := name.NewRepository(m+"/x", name.StrictValidation); err != nil {
		return usageError("--registry-mirror %q is not HOST[/PREFIX]: %v", f.options.Mirror, err)
	}
	return nil
}

// mirrorPrefix is --registry-mirror without surrounding space or a
// trailing slash.
func (f *imagesFlags) mirrorPrefix() string {
	return strings.TrimSuffix(strings.TrimSpace(f.options.Mirror), "/")
}

// ToConfig sets the run's image options (run.Config.Images).
func (f *imagesFlags) ToConfig(_ context.Context, c *run.Config) error {
	c.Images = f.options
	c.Images.Mirror = f.mirrorPrefix()
	return nil
}
