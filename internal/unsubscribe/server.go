package unsubscribe

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// Defaults of `rindactl unsubscribe serve`.
const (
	// RatePerIPDefault and BurstDefault bound the requests of one client
	// IP. Mail providers send one-click POSTs from a few of their own
	// addresses, so the bound is generous: it stops a scanner, not Gmail.
	RatePerIPDefault = 10.0 // per second
	BurstDefault     = 50
	// RequestTimeoutDefault bounds one request's work (its database
	// statements included).
	RequestTimeoutDefault = 10 * time.Second
	// BodyMaxBytes bounds a POST body: a one-click POST is one short field.
	BodyMaxBytes = 4 << 10
)

// HandlerOptions configures NewHandler; zero values take the defaults.
type HandlerOptions struct {
	// Limiter bounds requests per client IP; nil: no limit.
	Limiter *IPLimiter
	// RequestTimeout bounds one request's database work.
	RequestTimeout time.Duration
	Logger         *slog.Logger
}

// NewHandler serves the unsubscribe endpoints over db:
//
//	GET  .../TOKEN   a confirmation page with one button (no script, no
//	                 tracking); changes nothing
//	POST .../TOKEN   RFC 8058 one-click (body List-Unsubscribe=One-Click),
//	                 also what the page's button sends: suppresses the
//	                 address and ends its enrollments at once
//	GET  /healthz    200 when the process is up (probes)
//
// The token is the path's last segment, so the server works behind a proxy
// at any prefix. A bad token, or one used already, gets 400 and changes
// nothing; too many requests from one IP get 429.
func NewHandler(db store.TxDB, opts HandlerOptions) http.Handler {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = RequestTimeoutDefault
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &handler{db: db, opts: opts}
}

type handler struct {
	db   store.TxDB
	opts HandlerOptions
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	// No script, style only inline, the form posts back here, no framing,
	// no referrer leaking the token, nothing cached.
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	if r.URL.Path == "/healthz" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	if h.opts.Limiter != nil {
		if ok, retry := h.opts.Limiter.Allow(r); !ok {
			hdr.Set("Retry-After", retryAfter(retry))
			writePage(w, http.StatusTooManyRequests, pageRateLimited)
			return
		}
	}
	token := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	if token == "" {
		writePage(w, http.StatusNotFound, pageNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
	defer cancel()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.answer(w, Check(ctx, h.db, token), pageConfirm)
	case http.MethodPost:
		if !oneClickBody(w, r) {
			writePage(w, http.StatusBadRequest, pageNotOneClick)
			return
		}
		res, err := Apply(ctx, h.db, token, ViaHTTP)
		if err == nil {
			h.opts.Logger.Info("unsubscribe applied", "via", string(ViaHTTP), "enrollments_ended", res.Ended, "suppressed", res.Suppressed)
		}
		h.answer(w, err, pageDone)
	default:
		hdr.Set("Allow", "GET, HEAD, POST")
		writePage(w, http.StatusMethodNotAllowed, pageMethod)
	}
}

// answer writes the page for err: ok when nil.
func (h *handler) answer(w http.ResponseWriter, err error, ok page) {
	switch {
	case err == nil:
		writePage(w, http.StatusOK, ok)
	case errors.Is(err, ErrBadToken):
		writePage(w, http.StatusBadRequest, pageBadToken)
	case errors.Is(err, ErrReplayed):
		writePage(w, http.StatusBadRequest, pageReplayed)
	default:
		h.opts.Logger.Error("unsubscribe request failed", "error", err.Error())
		w.Header().Set("Retry-After", "60")
		writePage(w, http.StatusServiceUnavailable, pageUnavailable)
	}
}

// oneClickBody reads a bounded form body and reports whether it is the
// RFC 8058 one-click request (List-Unsubscribe=One-Click), urlencoded or
// multipart.
func oneClickBody(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, BodyMaxBytes)
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var err error
	if mediaType == "multipart/form-data" {
		err = r.ParseMultipartForm(BodyMaxBytes)
	} else {
		err = r.ParseForm()
	}
	return err == nil && r.PostForm.Get("List-Unsubscribe") == "One-Click"
}

func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}
