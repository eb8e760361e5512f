;;; lsp_eglot.el --- Emacs (eglot) drives deja lsp as docs/editors.md configures it
;; Loaded after the user's init.el (the documented snippet, as written): opens
;; $DEJA_FILE, starts eglot as M-x eglot does, and asks hovers on an agent's line
;; and a person's through eglot's own connection; what it saw goes to
;; $DEJA_EGLOT_OUT as JSON, then Emacs exits.
(require 'json)
(let ((out (list (cons 'error nil))))
  (condition-case err
      (progn
        (require 'eglot)
        (find-file (getenv "DEJA_FILE"))
        (call-interactively #'eglot)
        (let ((server (eglot-current-server)))
          (push (cons 'server (and server (plist-get (eglot--server-info server) :name))) out)
          (dolist (probe (list (cons 'agent_hover (string-to-number (getenv "DEJA_AGENT_LINE")))
                               (cons 'person_hover 0)))
            (goto-char (point-min))
            (forward-line (cdr probe))
            (let ((answer (jsonrpc-request server :textDocument/hover
                                           (eglot--TextDocumentPositionParams))))
              (push (cons (car probe)
                          (and answer (plist-get (plist-get answer :contents) :value)))
                    out)))
          (eglot-shutdown server)))
    (error (setcdr (assq 'error out) (error-message-string err))))
  (with-temp-file (getenv "DEJA_EGLOT_OUT")
    (insert (json-encode out))))
(kill-emacs 0)
