package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Lease timings: a leader that dies is replaced within LeaseDuration plus a
// RetryPeriod (under 20 s); one that stops hands over at once.
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

// ErrLostLease says another replica took the Lease while this one led.
var ErrLostLease = errors.New("kubernetes: lost the leader Lease")

// Lead campaigns for the Lease namespace/name as identity and runs run while
// it holds it. When ctx ends, run is stopped and awaited first, and only then
// is the Lease released, so the next leader never overlaps a cycle in flight.
// It returns ErrLostLease when the Lease was lost while ctx was still live.
func Lead(ctx context.Context, rc *rest.Config, namespace, name, identity string, log *slog.Logger, run func(context.Context)) error {
	cc, err := coordinationv1.NewForConfig(rest.CopyConfig(rc))
	if err != nil {
		return fmt.Errorf("kubernetes: lease client: %w", err)
	}
	lock := &resourcelock.LeaseLock{LeaseMeta: metaFor(namespace, name), Client: cc,
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity}}
	ectx, ecancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ecancel()
	var leading, ran atomic.Bool
	stopWatch := context.AfterFunc(ctx, func() {
		if !leading.Load() {
			ecancel() // not leading: stop campaigning at once
		}
	})
	defer stopWatch()
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: LeaseDuration, RenewDeadline: RenewDeadline, RetryPeriod: RetryPeriod,
		ReleaseOnCancel: true, Name: name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				leading.Store(true)
				ran.Store(true)
				log.Info("leading", "lease", namespace+"/"+name, "identity", identity)
				rctx, cancel := context.WithCancel(lctx)
				stop := context.AfterFunc(ctx, cancel)
				run(rctx)
				stop()
				cancel()
				ecancel() // release the Lease only now
			},
			OnStoppedLeading: func() { log.Info("stopped leading", "lease", namespace+"/"+name, "identity", identity) },
			OnNewLeader: func(id string) {
				if id != identity {
					log.Info("another replica leads", "lease", namespace+"/"+name, "leader", id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("kubernetes: leader election: %w", err)
	}
	le.Run(ectx)
	if ran.Load() && ctx.Err() == nil {
		return ErrLostLease
	}
	return nil
}

func metaFor(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
