#!/usr/bin/env bash
# Generates deepcopy functions, the typed clientset, listers and informers of the
# traffic-migration API with k8s.io/code-generator. The generators' paths come from the
# Makefile, which builds them from the pinned hack/tools/codegen module.
set -euo pipefail

cd "$(dirname "$0")/.."
module=open-cluster-management.io/traffic-migration
apis=("${module}/pkg/apis/traffic/v1alpha1")
header=hack/boilerplate.go.txt

: "${DEEPCOPY_GEN:?run through 'make generate'}"
: "${CLIENT_GEN:?run through 'make generate'}"
: "${LISTER_GEN:?run through 'make generate'}"
: "${INFORMER_GEN:?run through 'make generate'}"

# Start from nothing so that generated files of removed types do not linger.
rm -rf pkg/client
find pkg/apis -name zz_generated.deepcopy.go -delete

"${DEEPCOPY_GEN}" --go-header-file "${header}" --output-file zz_generated.deepcopy.go "${apis[@]}"

"${CLIENT_GEN}" --go-header-file "${header}" \
  --clientset-name versioned --input-base "" \
  --input "${apis[@]}" \
  --output-pkg "${module}/pkg/client/clientset" --output-dir pkg/client/clientset

"${LISTER_GEN}" --go-header-file "${header}" \
  --output-pkg "${module}/pkg/client/listers" --output-dir pkg/client/listers "${apis[@]}"

"${INFORMER_GEN}" --go-header-file "${header}" \
  --versioned-clientset-package "${module}/pkg/client/clientset/versioned" \
  --listers-package "${module}/pkg/client/listers" \
  --output-pkg "${module}/pkg/client/informers" --output-dir pkg/client/informers "${apis[@]}"
