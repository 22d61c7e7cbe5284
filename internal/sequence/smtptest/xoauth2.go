package smtptest

import (
	"bytes"
	"strings"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// xoauth2 is the SASL mechanism Google and Microsoft take with an OAuth2
// access token: "user=U^Aauth=Bearer T^A^A" as the initial response.
const xoauth2 = "XOAUTH2"

type xoauth2Server struct {
	session *session
	// refused: the token was refused and the error challenge sent.
	refused bool
}

// errorChallenge is Gmail's XOAUTH2 error challenge for a refused token
// (developers.google.com/gmail/imap/xoauth2-protocol): the client answers
// it with an empty line and gets the 535.
const errorChallenge = `{"status":"400","schemes":"Bearer","scope":"https://mail.google.com/"}`

func (x *xoauth2Server) Next(response []byte) (challenge []byte, done bool, err error) {
	if x.refused {
		return nil, true, &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Username and Password not accepted (XOAUTH2)"}
	}
	if response == nil {
		return []byte{}, false, nil // ask for the initial response
	}
	var user, token string
	for _, f := range bytes.Split(response, []byte{1}) {
		k, v, _ := strings.Cut(string(f), "=")
		switch k {
		case "user":
			user = v
		case "auth":
			token, _ = strings.CutPrefix(v, "Bearer ")
		}
	}
	if err := x.session.reply(StageAuth, user, ""); err != nil {
		return nil, true, err
	}
	if user == "" || token == "" || !x.session.server.opts.Bearer(user, token) {
		x.refused = true
		return []byte(errorChallenge), false, nil
	}
	x.session.username = user
	return nil, true, nil
}

// oauthBearerServer is go-sasl's OAUTHBEARER server (RFC 7628) checking the
// token as xoauth2Server does; its refusal, which go-smtp would send as a
// 454, is the 535 5.7.8 servers answer.
type oauthBearerServer struct{ sasl.Server }

func newOAuthBearerServer(ss *session) sasl.Server {
	return oauthBearerServer{sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
		if ss.reply(StageAuth, o.Username, "") != nil || !ss.server.opts.Bearer(o.Username, o.Token) {
			return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
		}
		ss.username = o.Username
		return nil
	})}
}

func (s oauthBearerServer) Next(response []byte) ([]byte, bool, error) {
	challenge, done, err := s.Server.Next(response)
	if err != nil {
		err = &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Username and Password not accepted (OAUTHBEARER)"}
	}
	return challenge, done, err
}
