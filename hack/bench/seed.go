package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return f(ctx, i) })
	}
	return g.Wait()
}

func seedClient(admin *rest.Config) (*kubernetes.Clientset, error) {
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 10000, 20000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	cfg.Timeout = 120 * time.Second
	return kubernetes.NewForConfig(cfg)
}

func seed(c config, admin *rest.Config, adminKubeconfig, fixtures, dir string) error {
	ctx := context.Background()
	kube, err := seedClient(admin)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(admin)
	if err != nil {
		return err
	}
	progress := func(what string, n int, t0 time.Time) {
		fmt.Printf("  %-40s %6d in %s\n", what, n, time.Since(t0).Round(time.Millisecond))
	}

	t0 := time.Now()
	if err := parallel(ctx, c.Namespaces, c.workers, func(ctx context.Context, i int) error {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   nsName(i),
			Labels: map[string]string{"team": fmt.Sprintf("team-%03d", i%150), "env": []string{"prod", "staging", "dev"}[i%3]},
		}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("namespaces: %w", err)
	}
	progress("namespaces", c.Namespaces, t0)

	// CRDs first so they are Established while the bulk is being created.
	t0 = time.Now()
	crds, err := fixtureCRDs(fixtures)
	if err != nil {
		return err
	}
	for i := 0; i < c.OtherCRDs; i++ {
		crds = append(crds, otherCRD(i))
	}
	if err := parallel(ctx, len(crds), 8, func(ctx context.Context, i int) error {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crds[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("CRDs: %w", err)
	}
	progress(fmt.Sprintf("CRDs (Argo CD, Rollouts and %d others)", c.OtherCRDs), len(crds), t0)

	seedKind := func(what string, n int, f func(ctx context.Context, i int) error) error {
		t0 := time.Now()
		if err := parallel(ctx, n, c.workers, f); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		progress(what, n, t0)
		return nil
	}
	if err := seedKind("Ready nodes (status set)", c.Nodes, func(ctx context.Context, i int) error {
		return createNode(ctx, kube, i)
	}); err != nil {
		return err
	}
	// Services, Deployments and pods at once, each kind on its own workers.
	var g errgroup.Group
	g.Go(func() error {
		return seedKind("headless Services", c.Services, func(ctx context.Context, i int) error {
			_, err := kube.CoreV1().Services(nsName(i%c.Namespaces)).Create(ctx, service(i), metav1.CreateOptions{})
			return err
		})
	})
	g.Go(func() error {
		return seedKind("Deployments", c.Deployments, func(ctx context.Context, i int) error {
			_, err := kube.AppsV1().Deployments(nsName(i%c.Namespaces)).Create(ctx, deployment(i), metav1.CreateOptions{})
			return err
		})
	})
	g.Go(func() error {
		return seedKind("bound Running pods (status set)", c.Nodes*c.PodsPerNode, func(ctx context.Context, i int) error {
			return createBoundPod(ctx, kube, i%c.Nodes, i, nsName(i%c.Namespaces))
		})
	})
	if err := g.Wait(); err != nil {
		return err
	}

	if c.ReleaseBombs > 0 {
		t0 = time.Now()
		payload := testcluster.BombPayload(760 << 20)
		if err := parallel(ctx, c.ReleaseBombs, 4, func(ctx context.Context, i int) error {
			_, err := kube.CoreV1().Secrets(nsName(i%c.Namespaces)).Create(ctx, testcluster.BombSecret(nsName(i%c.Namespaces), fmt.Sprintf("bomb-%d", i), payload), metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("release bombs: %w", err)
		}
		progress(fmt.Sprintf("release-Secret bombs (%d KiB -> ~760 MB)", len(payload)>>10), c.ReleaseBombs, t0)
	}

	t0 = time.Now()
	if err := seedIngressNginx(ctx, kube, adminKubeconfig, fixtures, dir); err != nil {
		return fmt.Errorf("ingress-nginx: %w", err)
	}
	progress("ingress-nginx (real manifest, status set)", 1, t0)

	t0 = time.Now()
	if err := waitEstablished(ctx, ext, crds); err != nil {
		return err
	}
	progress("CRDs Established", len(crds), t0)
	return nil
}
