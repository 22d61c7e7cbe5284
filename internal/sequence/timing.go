package sequence

import (
	"sync/atomic"
	"time"
)

// TickTiming says where an email tick's time went, in milliseconds summed
// over its mailbox workers (a worker is one mailbox's job on one batch).
// The worker phases are what a message waits for in turn: the sum of a
// worker's phases is its wall time, so whatever a phase takes there is on
// the message's critical path. The other figures are how long work beside
// the workers took, whoever waited for it: what runs while a message is on
// the wire is hidden behind SMTP.
type TickTiming struct {
	// Worker phases.
	RecordWaitMS float64 `json:"record_wait_ms"` // until the message's 'sending' row was committed
	SMTPMS       float64 `json:"smtp_ms"`        // the SMTP exchange
	SettleWaitMS float64 `json:"settle_wait_ms"` // handing outcomes to the settle writer
	// WorkersMS is the workers' wall time in all: the phases above plus
	// the small rest (window and bounce checks, hand-offs).
	WorkersMS float64 `json:"workers_ms"`
	// Beside the workers.
	RenderMS float64 `json:"render_ms"` // composing the next message while one is on the wire
	ClaimMS  float64 `json:"claim_ms"`  // the claim loop's claims and loads
	RecordMS float64 `json:"record_ms"` // 'sending' groups (with the settles they carry)
	SettleMS float64 `json:"settle_ms"` // settle groups
}

// Add sums o into t (a run of several ticks).
func (t *TickTiming) Add(o TickTiming) {
	t.RecordWaitMS += o.RecordWaitMS
	t.RenderMS += o.RenderMS
	t.SMTPMS += o.SMTPMS
	t.SettleWaitMS += o.SettleWaitMS
	t.WorkersMS += o.WorkersMS
	t.ClaimMS += o.ClaimMS
	t.RecordMS += o.RecordMS
	t.SettleMS += o.SettleMS
}

// PerSend divides every figure by n messages.
func (t TickTiming) PerSend(n int) TickTiming {
	if n == 0 {
		return TickTiming{}
	}
	d := float64(n)
	return TickTiming{
		RecordWaitMS: t.RecordWaitMS / d, RenderMS: t.RenderMS / d, SMTPMS: t.SMTPMS / d, SettleWaitMS: t.SettleWaitMS / d,
		WorkersMS: t.WorkersMS / d, ClaimMS: t.ClaimMS / d, RecordMS: t.RecordMS / d, SettleMS: t.SettleMS / d,
	}
}

// phase names a TickTiming figure while the tick runs.
type phase int

const (
	phaseRecordWait phase = iota
	phaseRender
	phaseSMTP
	phaseSettleWait
	phaseWorkers
	phaseClaim
	phaseRecord
	phaseSettle
	phases
)

// tickClock accumulates the tick's phases; any goroutine may add to it.
type tickClock [phases]atomic.Int64

// since adds the time since start to p.
func (c *tickClock) since(p phase, start time.Time) {
	c[p].Add(int64(time.Since(start)))
}

func (c *tickClock) timing() TickTiming {
	ms := func(p phase) float64 { return float64(c[p].Load()) / float64(time.Millisecond) }
	return TickTiming{
		RecordWaitMS: ms(phaseRecordWait), RenderMS: ms(phaseRender), SMTPMS: ms(phaseSMTP), SettleWaitMS: ms(phaseSettleWait),
		WorkersMS: ms(phaseWorkers), ClaimMS: ms(phaseClaim), RecordMS: ms(phaseRecord), SettleMS: ms(phaseSettle),
	}
}
