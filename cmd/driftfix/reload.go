package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/driftfix/driftfix/bot"
	"github.com/driftfix/driftfix/bot/audit"
	"github.com/driftfix/driftfix/bot/config"
)

// policyWatch reads the policy file again when its content changes (a
// mounted ConfigMap is swapped through a symbolic link, so its content is
// what is compared, not a file event). A valid new policy is built into
// the bot's parts (clients, instances, publisher, state), which the runner
// takes at its next cycle or unit of work (and its scheduler at once: a
// changed schedule or jitter moves the pending cycle); an invalid one, such
// as a schedule cron cannot read, is logged once with its key and line,
// counted (driftfix_policy_invalid), and the last good policy stays.
type policyWatch struct {
	file    string
	dryRun  bool // --dry-run: whatever the policy says, nothing is written
	log     *slog.Logger
	metrics *bot.Metrics
	audit   *audit.Store // the audit events kept, bounded by the policy's audit key (nil without)

	mu   sync.Mutex
	used [32]byte // the content in use
	bad  [32]byte // the last content refused, not read again
}

// reload is bot.Runner.Reload: the parts of a changed, valid policy; nil,
// nil when the file did not change.
func (p *policyWatch) reload(ctx context.Context) (*bot.Parts, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, err := os.ReadFile(p.file)
	if err != nil {
		// A ConfigMap's link is swapped atomically, so a failed read is a
		// real problem (the file removed): the policy in use stays.
		h := sha256.Sum256([]byte("unreadable: " + err.Error()))
		if h != p.bad {
			p.bad = h
			p.log.Error("policy file unreadable: the policy in use stays", "file", p.file, "error", err.Error())
			p.metrics.PolicyReload(false)
		}
		return nil, err
	}
	h := sha256.Sum256(b)
	if h == p.used || h == p.bad {
		return nil, nil
	}
	cfg, err := config.Parse(b)
	var es config.Errors
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			p.log.Error("changed policy refused: the policy in use stays", "file", p.file, "line", e.Line, "key", e.Key, "problem", e.Msg)
		}
	case err != nil:
		p.log.Error("changed policy refused: the policy in use stays", "file", p.file, "error", err.Error())
	}
	if err != nil {
		p.bad = h
		p.metrics.PolicyReload(false)
		return nil, fmt.Errorf("changed policy %s refused: %w", p.file, err)
	}
	r, closeAll, err := buildRunner(ctx, cfg, !p.dryRun && !cfg.DryRun, p.log)
	if err != nil {
		p.bad = h
		p.log.Error("changed policy refused: the policy in use stays", "file", p.file, "error", err.Error())
		p.metrics.PolicyReload(false)
		return nil, fmt.Errorf("changed policy %s refused: %w", p.file, err)
	}
	p.used, p.bad = h, [32]byte{}
	p.metrics.PolicyReload(true)
	if p.audit != nil {
		p.audit.SetOptions(auditOptions(cfg.Audit))
	}
	return &bot.Parts{Config: r.Config, Instances: withAudit(r.Instances, p.audit), Publisher: r.Publisher, MemoSeal: r.MemoSeal, Metrics: r.Metrics, Close: closeAll}, nil
}
