// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// applyFieldManager is the field manager of what the tests apply, as kubectl's.
const applyFieldManager = "kubectl"

// kustomization is the part of a kustomization.yaml that applyKustomization
// understands: a plain list of resource files.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// applyKustomization does what 'kubectl apply --server-side -k dir' does for a
// kustomization that only lists resource files: it applies every object of every file,
// in the order listed, and returns them. A kustomization with anything else
// (patches, prefixes, generators, ...) is refused rather than applied half right.
func applyKustomization(ctx context.Context, cfg *rest.Config, dir string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := yaml.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("read %s/kustomization.yaml: %w", dir, err)
	}
	for field := range fields {
		if !slices.Contains([]string{"apiVersion", "kind", "resources"}, field) {
			return nil, fmt.Errorf("%s/kustomization.yaml has %q, which this test's kustomize cannot do", dir, field)
		}
	}
	var k kustomization
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return nil, fmt.Errorf("read %s/kustomization.yaml: %w", dir, err)
	}
	if len(k.Resources) == 0 {
		return nil, fmt.Errorf("%s/kustomization.yaml lists no resources", dir)
	}

	a, err := newApplier(cfg)
	if err != nil {
		return nil, err
	}
	var applied []*unstructured.Unstructured
	for _, res := range k.Resources {
		objs, err := readObjects(filepath.Join(dir, res))
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if err := a.apply(ctx, obj); err != nil {
				return nil, fmt.Errorf("apply %s %s/%s from %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), res, err)
			}
			applied = append(applied, obj)
		}
	}
	return applied, nil
}

// readObjects reads every object of a multi-document YAML file.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document, e.g. after a trailing ---
		}
		if obj.GetKind() == "" || obj.GetAPIVersion() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("%s holds an object without apiVersion, kind or name: %v", path, obj.Object)
		}
		objs = append(objs, obj)
	}
}

// applier applies objects of any kind server-side, finding their resources through
// discovery as kubectl does.
type applier struct {
	client dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(cfg *rest.Config) (*applier, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &applier{client: client, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// apply applies obj server-side, taking over fields others own, as
// 'kubectl apply --server-side --force-conflicts' does.
func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		// A kind whose CRD was applied a moment ago: discover again.
		a.mapper.Reset()
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return err
	}
	var client dynamic.ResourceInterface = a.client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		client = a.client.Resource(mapping.Resource).Namespace(ns)
	}
	if _, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: applyFieldManager, Force: true}); err != nil {
		return err
	}
	if gvk.Kind == "CustomResourceDefinition" {
		a.mapper.Reset()
	}
	return nil
}
