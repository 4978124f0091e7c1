package classifiers

import "testing"

func TestRequestManager(t *testing.T) {
	for uri, want := range map[string]string{
		"/apis/apps/v1/namespaces/a/deployments/web?fieldManager=argocd-controller":        "argocd-controller",
		"/apis/apps/v1/namespaces/a/deployments/web?force=true&fieldManager=my%20operator": "my operator",
		"/apis/apps/v1/namespaces/a/deployments/web?fieldManager=a+b":                      "a b",
		"/apis/apps/v1/namespaces/a/deployments/web?fieldManager=bad%zz":                   "",
		"/apis/apps/v1/namespaces/a/deployments/web?fieldManager=cut%2":                    "",
		"/apis/apps/v1/namespaces/a/deployments/web":                                       "",
		"/apis/apps/v1/namespaces/a/deployments/web?xfieldManager=x":                       "",
	} {
		if got := requestManager(uri); got != want {
			t.Errorf("requestManager(%q) = %q, want %q", uri, got, want)
		}
	}
}

func TestKindOfIdentity(t *testing.T) {
	for user, want := range map[string]identityKind{
		"system:serviceaccount:kube-system:horizontal-pod-autoscaler": idServiceAccount,
		"system:kube-controller-manager":                              idComponent,
		"system:node:worker-1":                                        idComponent,
		"system:anonymous":                                            idPerson,
		"oidc:alice":                                                  idPerson,
		"kubernetes-admin":                                            idPerson,
		"":                                                            idPerson,
	} {
		if got := kindOfIdentity(user); got != want {
			t.Errorf("kindOfIdentity(%q) = %v, want %v", user, got, want)
		}
	}
}
