// Package charttest holds the tests of the openkeel-ironic Helm chart and of
// the Dockerfile. It is a module of its own so that the Helm and Kubernetes
// libraries it needs stay out of the product's go.mod:
//
//	cd deploy/helm/chart-test && go test ./...
package charttest
