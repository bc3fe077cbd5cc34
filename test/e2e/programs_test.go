// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// startManager runs the traffic-migration manager binary against the hub as the
// manifests' Deployment runs it in a pod: as the manager's ServiceAccount, so with
// exactly the RBAC of manifests/rbac.yaml, but with addresses of its own. It returns
// once the manager is ready. The test bed stops it at the
// latest; the caller may stop it earlier.
func startManager(t *testing.T, ctx context.Context, agentImage string) *testbed.Process {
	t.Helper()
	kubeconfig, err := bed.Hub.ServiceAccountKubeconfig(ctx, managerNamespace, managerServiceAccount)
	if err != nil {
		t.Fatal(err)
	}
	m, err := bed.StartManagerAs(ctx, kubeconfig, "--agent-image="+agentImage, "-v=4")
	if err != nil {
		t.Fatalf("start the traffic-migration manager: %v", err)
	}
	return m.Process
}

// startAgent runs the traffic-migration agent for a spoke as the agent's Deployment on
// that spoke would run it: the binary of the image that the Deployment's command names
// (traffic-migration-agent), with the Deployment's own arguments, the files of the hub
// kubeconfig Secret the Deployment mounts taken from secretDir, and a token of the
// agent's ServiceAccount on the spoke in place of the pod's, so with exactly the spoke
// RBAC the add-on ships. It returns once the agent is ready (its caches have synced).
// The test bed stops it at the latest; the caller may stop it earlier.
func startAgent(t *testing.T, ctx context.Context, cluster string, deploy *appsv1.Deployment, secretName, secretDir string) *testbed.Process {
	t.Helper()
	healthAddr := freeAddress(t)
	kubeconfig, err := bed.Spokes[cluster].ServiceAccountKubeconfig(ctx, deploy.Namespace, deploy.Spec.Template.Spec.ServiceAccountName)
	if err != nil {
		t.Fatal(err)
	}
	prog, args, err := localAgentCommand(deploy, secretName, secretDir, kubeconfig, healthAddr)
	if err != nil {
		t.Fatalf("the agent Deployment on %s: %v", cluster, err)
	}
	t.Logf("agent of %s: %s %s", cluster, prog.Name, strings.Join(args, " "))
	p, err := bed.StartProgram(ctx, "traffic-migration agent ("+cluster+")", prog, args, testbed.HTTPReady("http://"+healthAddr+"/readyz"))
	if err != nil {
		t.Fatalf("start the agent of %s: %v", cluster, err)
	}
	return p
}

// The manager's ServiceAccount, as manifests/rbac.yaml creates it.
const (
	managerNamespace      = "open-cluster-management-addon"
	managerServiceAccount = "traffic-migration-manager"
)

// agentContainer is the name of the agent's container in its Deployment.
const agentContainer = "agent"

// The binaries of the traffic-migration image (see the Dockerfile), by their path in
// it, as the test bed's programs, and the image's entrypoint, which a container runs
// when its Deployment gives it no command.
var imagePrograms = map[string]testbed.Program{
	imageEntrypoint: testbed.ProgramTrafficMigration,
	agentBinary:     testbed.ProgramTrafficMigrationAgent,
}

const (
	imageEntrypoint = "/traffic-migration"
	// agentBinary is the binary the agent's Deployment runs.
	agentBinary = "/traffic-migration-agent"
)

// localAgentCommand turns the command and arguments of the agent's container in its
// Deployment into those of a local process: the test bed's build of the image's binary
// that the command names, and its arguments, in which every path inside the mount of
// the Secret secretName is taken from secretDir instead, the health probes listen on
// healthAddr, and the agent reaches its cluster with kubeconfig instead of the pod's
// service account. Everything else (cluster name, install namespace, metrics labels,
// log level, ...) is kept as rendered. It fails if the command is not a binary of the image, or if the hub
// kubeconfig is not read from the Secret's mount.
func localAgentCommand(deploy *appsv1.Deployment, secretName, secretDir, kubeconfig, healthAddr string) (testbed.Program, []string, error) {
	var container *corev1.Container
	for i := range deploy.Spec.Template.Spec.Containers {
		if c := &deploy.Spec.Template.Spec.Containers[i]; c.Name == agentContainer {
			container = c
		}
	}
	if container == nil {
		return testbed.Program{}, nil, fmt.Errorf("Deployment %s/%s has no container %q", deploy.Namespace, deploy.Name, agentContainer)
	}
	command := container.Command
	if len(command) == 0 {
		command = []string{imageEntrypoint}
	}
	prog, ok := imagePrograms[command[0]]
	if !ok {
		return testbed.Program{}, nil, fmt.Errorf("container %q runs %v, not a binary of the traffic-migration image", agentContainer, command)
	}
	containerArgs := append(slices.Clone(command[1:]), container.Args...)
	secretVolumes := map[string]bool{}
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secretName {
			secretVolumes[v.Name] = true
		}
	}
	var mountPath string
	for _, m := range container.VolumeMounts {
		if secretVolumes[m.Name] {
			mountPath = filepath.Clean(m.MountPath)
		}
	}
	if mountPath == "" {
		return testbed.Program{}, nil, fmt.Errorf("container %q does not mount the Secret %s", agentContainer, secretName)
	}

	args := make([]string, 0, len(containerArgs)+1)
	var hubKubeconfigFromSecret bool
	for _, arg := range containerArgs {
		flag, value, hasValue := strings.Cut(arg, "=")
		switch {
		case !hasValue:
		case flag == "--kubeconfig":
			return testbed.Program{}, nil, fmt.Errorf("container %q already has %s", agentContainer, arg)
		case flag == "--health-probe-bind-address":
			arg = flag + "=" + healthAddr
		case strings.HasPrefix(value, mountPath+"/"):
			arg = flag + "=" + filepath.Join(secretDir, strings.TrimPrefix(value, mountPath+"/"))
			if flag == "--hub-kubeconfig" {
				hubKubeconfigFromSecret = true
			}
		}
		args = append(args, arg)
	}
	if !hubKubeconfigFromSecret {
		return testbed.Program{}, nil, fmt.Errorf("container %q does not read --hub-kubeconfig from the Secret mounted at %s: %v", agentContainer, mountPath, containerArgs)
	}
	return prog, append(args, "--kubeconfig="+kubeconfig), nil
}

// writeSecretFiles writes each key of a Secret to a file of that name in dir, as the
// kubelet mounts a Secret volume.
func writeSecretFiles(secret *corev1.Secret, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for key, value := range secret.Data {
		if err := os.WriteFile(filepath.Join(dir, key), value, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// freeAddress is a free loopback address for a program's listener.
func freeAddress(t *testing.T) string {
	t.Helper()
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
