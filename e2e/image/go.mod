// Module image builds driftfix's container image without a container
// daemon, with go-containerregistry: an OCI image layout holding one image
// per platform under one index. It is separate so the main module does not
// depend on an image library it never uses at run time.
module github.com/driftfix/driftfix/e2e/image

go 1.26.0

require github.com/driftfix/driftfix v0.0.0

require (
	github.com/go-logr/logr v1.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/utils v0.0.0-20260626114624-be93311217bd // indirect
)

require (
	github.com/fxamacker/cbor/v2 v2.9.1 // indirect
	github.com/google/go-containerregistry v0.22.1
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sync v0.25.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	k8s.io/apimachinery v0.37.2 // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
)

replace github.com/driftfix/driftfix => ../..
