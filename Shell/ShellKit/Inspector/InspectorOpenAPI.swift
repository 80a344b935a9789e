/// The inspector's API described as OpenAPI 3.1 (`GET /api/v1/openapi.json`). The same
/// text is `Docs/openapi.json`; a test keeps the two equal and checks the document
/// against what the server answers.
enum InspectorOpenAPI {
    static let json = #"""
        {
         "openapi": "3.1.0",
         "info": {
          "title": "cxshell inspector",
          "version": "0.19.0",
          "description": "The world of simulated devices, driven and watched over HTTP (inspector.md). Served on `cxshell serve --listen`'s port to requests addressed to the shell itself (localhost, an IP address, or an `--api-host` name; another name gets 421). With `--api-token`, every path but `GET /` (the page, static text whose sign-in form asks for the token), /livez and /readyz needs `Authorization: Bearer <token>` (else 401). A write needs `Content-Type: application/json` and, when it carries an `Origin`, the shell's own (else 403). Errors are `{\"error\": \"<sentence>\"}`."
         },
         "security": [
          {
           "bearer": []
          }
         ],
         "paths": {
          "/": {
           "get": {
            "summary": "The inspector's page",
            "responses": {
             "200": {
              "description": "One self-contained HTML page.",
              "content": {
               "text/html": {
                "schema": {
                 "type": "string"
                }
               }
              }
             }
            }
           }
          },
          "/livez": {
           "get": {
            "summary": "Alive",
            "security": [],
            "responses": {
             "200": {
              "description": "`ok`",
              "content": {
               "text/plain": {
                "schema": {
                 "type": "string"
                }
               }
              }
             }
            }
           }
          },
          "/readyz": {
           "get": {
            "summary": "Ready: listening, and the world accepts requests",
            "security": [],
            "responses": {
             "200": {
              "description": "`ok`",
              "content": {
               "text/plain": {
                "schema": {
                 "type": "string"
                }
               }
              }
             }
            }
           }
          },
          "/metrics": {
           "get": {
            "summary": "Prometheus text exposition",
            "responses": {
             "200": {
              "description": "cx_requests_total, cx_request_duration_seconds, cx_deliveries_total, cx_devices, cx_connections, cx_log_entries, cx_log_dropped_total.",
              "content": {
               "text/plain": {
                "schema": {
                 "type": "string"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/openapi.json": {
           "get": {
            "summary": "This document",
            "responses": {
             "200": {
              "description": "OpenAPI 3.1.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/requests": {
           "post": {
            "summary": "The line protocol over HTTP",
            "description": "One request (shell-protocol.md) or an array of 1 to 10,000, applied in order. Each writes its deliveries and a `{\"network\":\"api\",…}` report line on standard output and is logged with source `api`.",
            "requestBody": {
             "required": true,
             "content": {
              "application/json": {
               "schema": {
                "oneOf": [
                 {
                  "type": "object"
                 },
                 {
                  "type": "array",
                  "items": {
                   "type": "object"
                  },
                  "minItems": 1,
                  "maxItems": 10000
                 }
                ]
               }
              }
             }
            },
            "responses": {
             "200": {
              "description": "Exactly the delivery and reply objects standard output would carry, in order.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "lines"
                 ],
                 "properties": {
                  "lines": {
                   "type": "array",
                   "items": {
                    "type": "object"
                   }
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "Not JSON, or not a request or an array of them.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/world": {
           "get": {
            "summary": "The world's summary",
            "responses": {
             "200": {
              "description": "",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/World"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/reset": {
           "post": {
            "summary": "Make the world as new",
            "description": "Clears every part of the world but those named in `keep`: `devices` (devices, the tokens they were issued, their topics, offline queues, PubNub registrations, webhook replay ids; the next device is `d1` again), `credentials` (APNs keys, service accounts, access tokens), `chaos` (rules), `appwrite` (projects and their broker connections), `clock` (what `clock` ops added), `log` (entries; seqs go on). The front door, the CA, plugins, the world's broker and `/metrics` counters stay. An empty body keeps nothing. Logged (source `api`, op `reset`) after the log was cleared, and runs the line protocol's `reset` op.",
            "requestBody": {
             "required": false,
             "content": {
              "application/json": {
               "schema": {
                "type": "object",
                "properties": {
                 "keep": {
                  "type": "array",
                  "items": {
                   "type": "string",
                   "enum": [
                    "devices",
                    "credentials",
                    "chaos",
                    "appwrite",
                    "clock",
                    "log"
                   ]
                  }
                 }
                }
               }
              }
             }
            },
            "responses": {
             "200": {
              "description": "What went from each part cleared (the clock: milliseconds taken back), and the parts kept.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "cleared",
                  "kept",
                  "effect"
                 ],
                 "properties": {
                  "cleared": {
                   "type": "object",
                   "additionalProperties": {
                    "type": "integer"
                   }
                  },
                  "kept": {
                   "type": "array",
                   "items": {
                    "type": "string"
                   }
                  },
                  "effect": {
                   "type": "string"
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "The body is not a JSON object, or `keep` names no part; nothing changed.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/snapshot": {
           "get": {
            "summary": "The world as a state document",
            "description": "What `cxshell serve --state FILE` saves: devices as after a reboot (iOS keeps its tray, Android clears it; apps not running), every token issued, credentials, chaos rules and the clock's offset. Also what APNs and FCM hold for an offline phone, and PubNub's push registrations. Not kept: channel registrations, Appwrite projects, the log.",
            "responses": {
             "200": {
              "description": "The document.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "cxshell_state"
                 ],
                 "properties": {
                  "cxshell_state": {
                   "type": "integer",
                   "description": "The format (1); a newer number is refused."
                  },
                  "saved_at": {
                   "type": "string",
                   "format": "date-time"
                  },
                  "devices": {
                   "type": "object",
                   "description": "`last_number`, `list` (each device after a reboot: platform, options, install, permission, token, fid, topics, the app's stored token, the iOS tray), `tokens` (every token and installation id issued, retired ones with `retired_at`)."
                  },
                  "credentials": {
                   "type": "object",
                   "description": "`apns_keys`, `google_keys` (public keys in PEM) and `access_tokens`."
                  },
                  "chaos": {
                   "type": "object",
                   "description": "`rules` as listed (with `remaining`) and `last_id`."
                  },
                  "clock": {
                   "type": "object",
                   "description": "`advanced_ms`."
                  }
                 }
                }
               }
              }
             }
            }
           },
           "post": {
            "summary": "Replace the world with a state document",
            "description": "The world as the document says (what it does not keep is cleared, as a reset clears it; the log stays). A document that is not JSON, not a state document, from a newer format, or with a value that does not read is refused with a sentence naming it, and nothing changes. Logged (source `api`, op `snapshot`).",
            "requestBody": {
             "required": true,
             "content": {
              "application/json": {
               "schema": {
                "type": "object",
                "required": [
                 "cxshell_state"
                ],
                "properties": {
                 "cxshell_state": {
                  "type": "integer",
                  "description": "The format (1); a newer number is refused."
                 },
                 "saved_at": {
                  "type": "string",
                  "format": "date-time"
                 },
                 "devices": {
                  "type": "object",
                  "description": "`last_number`, `list` (each device after a reboot: platform, options, install, permission, token, fid, topics, the app's stored token, the iOS tray), `tokens` (every token and installation id issued, retired ones with `retired_at`)."
                 },
                 "credentials": {
                  "type": "object",
                  "description": "`apns_keys`, `google_keys` (public keys in PEM) and `access_tokens`."
                 },
                 "chaos": {
                  "type": "object",
                  "description": "`rules` as listed (with `remaining`) and `last_id`."
                 },
                 "clock": {
                  "type": "object",
                  "description": "`advanced_ms`."
                 }
                }
               }
              }
             }
            },
            "responses": {
             "200": {
              "description": "How many devices and rules the world now has, and its clock's offset.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "restored",
                  "effect"
                 ],
                 "properties": {
                  "restored": {
                   "type": "object",
                   "properties": {
                    "devices": {
                     "type": "integer"
                    },
                    "rules": {
                     "type": "integer"
                    },
                    "advanced_ms": {
                     "type": "integer"
                    }
                   }
                  },
                  "effect": {
                   "type": "string"
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "The document was refused; nothing changed.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/devices": {
           "get": {
            "summary": "The devices, with a cursor",
            "parameters": [
             {
              "name": "limit",
              "in": "query",
              "schema": {
               "type": "integer",
               "minimum": 1,
               "maximum": 1000,
               "default": 100
              }
             },
             {
              "name": "after",
              "in": "query",
              "schema": {
               "type": "string"
              },
              "description": "A device id: the list goes on after it."
             },
             {
              "name": "platform",
              "in": "query",
              "schema": {
               "type": "string",
               "enum": [
                "ios",
                "android",
                "web"
               ]
              }
             },
             {
              "name": "state",
              "in": "query",
              "schema": {
               "type": "string",
               "enum": [
                "foreground",
                "background",
                "not_running",
                "force_stopped"
               ]
              }
             }
            ],
            "responses": {
             "200": {
              "description": "",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "devices",
                  "next"
                 ],
                 "properties": {
                  "devices": {
                   "type": "array",
                   "items": {
                    "$ref": "#/components/schemas/Device"
                   }
                  },
                  "next": {
                   "type": [
                    "string",
                    "null"
                   ],
                   "description": "Pass as `after` for the next page; null at the end."
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "A bad limit, or `after` names no device.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           },
           "post": {
            "summary": "Make devices",
            "description": "The `device` op's options (`platform`, `bundle`, `apns_environment`, `apns_team`, `fcm_project`, `android_api`, `background_pushes_per_hour`, `capabilities`, `resources`, `tray_limit`), `count` of them; with `ready: true` each is launched, registered and its core subscribed to `push` `events` with key `push`.",
            "requestBody": {
             "required": true,
             "content": {
              "application/json": {
               "schema": {
                "type": "object",
                "required": [
                 "platform"
                ],
                "properties": {
                 "platform": {
                  "type": "string",
                  "enum": [
                   "ios",
                   "android",
                   "web"
                  ]
                 },
                 "count": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 100000,
                  "default": 1
                 },
                 "ready": {
                  "type": "boolean",
                  "default": false
                 }
                },
                "additionalProperties": true
               }
              }
             }
            },
            "responses": {
             "201": {
              "description": "",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "devices"
                 ],
                 "properties": {
                  "devices": {
                   "type": "array",
                   "items": {
                    "type": "object",
                    "required": [
                     "device"
                    ],
                    "properties": {
                     "device": {
                      "type": "string"
                     },
                     "token": {
                      "type": [
                       "string",
                       "null"
                      ]
                     }
                    }
                   }
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "A bad option, count or ready.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/devices/{id}": {
           "parameters": [
            {
             "name": "id",
             "in": "path",
             "required": true,
             "schema": {
              "type": "string"
             }
            }
           ],
           "get": {
            "summary": "One device, whole",
            "responses": {
             "200": {
              "description": "As a list entry, with `tray` entries, `topics`, and the core's last 100 `deliveries`.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/DeviceView"
                }
               }
              }
             },
             "404": {
              "description": "No such device.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           },
           "delete": {
            "summary": "The phone leaves the world",
            "description": "As `uninstall` (its tokens retire), then it is gone. Its id is never given again.",
            "responses": {
             "204": {
              "description": "Gone."
             },
             "404": {
              "description": "No such device.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/log": {
           "get": {
            "summary": "Log entries",
            "parameters": [
             {
              "$ref": "#/components/parameters/device"
             },
             {
              "$ref": "#/components/parameters/source"
             },
             {
              "$ref": "#/components/parameters/status"
             },
             {
              "$ref": "#/components/parameters/q"
             },
             {
              "name": "after",
              "in": "query",
              "schema": {
               "type": "integer",
               "minimum": 0,
               "default": 0
              },
              "description": "Entries after this seq."
             },
             {
              "name": "limit",
              "in": "query",
              "schema": {
               "type": "integer",
               "minimum": 1,
               "maximum": 1000,
               "default": 100
              }
             },
             {
              "name": "order",
              "in": "query",
              "schema": {
               "type": "string",
               "enum": [
                "asc",
                "desc"
               ],
               "default": "asc"
              }
             },
             {
              "name": "wait",
              "in": "query",
              "schema": {
               "type": "integer",
               "minimum": 0,
               "maximum": 30,
               "default": 0
              },
              "description": "Seconds to wait for the first matching entry when there is none yet (asc only)."
             }
            ],
            "responses": {
             "200": {
              "description": "",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "entries",
                  "next"
                 ],
                 "properties": {
                  "entries": {
                   "type": "array",
                   "items": {
                    "$ref": "#/components/schemas/Entry"
                   }
                  },
                  "next": {
                   "type": [
                    "integer",
                    "null"
                   ],
                   "description": "The seq to pass as `after` next (asc); null for desc."
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "A bad filter, limit, order or wait.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           },
           "delete": {
            "summary": "Clear the log",
            "description": "The world is unchanged; seq goes on and is never reused.",
            "responses": {
             "204": {
              "description": "Cleared."
             }
            }
           }
          },
          "/api/v1/log.har": {
           "get": {
            "summary": "The network requests as HAR 1.2",
            "description": "The entries `/api/v1/log`'s filters select, oldest first, that came over the network (the line protocol's and the API's own ops are not HTTP exchanges): request, response status, headers and body, and how long the world took over it (`time`, `timings.wait`; the rest are -1 or 0). Secrets are redacted as the log redacts them. `_seq`, `_source` and `_effect` are the log's. Served as a download (`cxshell.har`).",
            "parameters": [
             {
              "$ref": "#/components/parameters/device"
             },
             {
              "$ref": "#/components/parameters/source"
             },
             {
              "$ref": "#/components/parameters/status"
             },
             {
              "$ref": "#/components/parameters/q"
             },
             {
              "name": "after",
              "in": "query",
              "schema": {
               "type": "integer",
               "minimum": 0,
               "default": 0
              },
              "description": "Entries after this seq."
             },
             {
              "name": "limit",
              "in": "query",
              "schema": {
               "type": "integer",
               "minimum": 1,
               "maximum": 100000,
               "default": 100000
              },
              "description": "How many log entries to look at (those that are not network requests count too)."
             }
            ],
            "responses": {
             "200": {
              "description": "A HAR 1.2 document.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "log"
                 ],
                 "properties": {
                  "log": {
                   "type": "object",
                   "required": [
                    "version",
                    "creator",
                    "entries"
                   ],
                   "properties": {
                    "version": {
                     "const": "1.2"
                    },
                    "creator": {
                     "type": "object"
                    },
                    "entries": {
                     "type": "array",
                     "items": {
                      "type": "object"
                     }
                    }
                   }
                  }
                 }
                }
               }
              }
             },
             "400": {
              "description": "A bad filter, limit or after.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/log/{seq}": {
           "parameters": [
            {
             "name": "seq",
             "in": "path",
             "required": true,
             "schema": {
              "type": "integer"
             }
            }
           ],
           "get": {
            "summary": "One entry, its request body whole",
            "responses": {
             "200": {
              "description": "",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Entry"
                }
               }
              }
             },
             "404": {
              "description": "Not retained (or never was).",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/log/{seq}/simctl": {
           "get": {
            "summary": "An APNs entry as a simctl file",
            "description": "PH-15: a logged APNs request (the front door's, or the line protocol's `apns` op) as an `.apns` file for `xcrun simctl push booted <file>`: the payload as sent (secrets redacted as the log redacts them) with `\"Simulator Target Bundle\"` set to its `apns-topic`. Served as a download.",
            "parameters": [
             {
              "name": "seq",
              "in": "path",
              "required": true,
              "schema": {
               "type": "integer"
              }
             }
            ],
            "responses": {
             "200": {
              "description": "The file.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "required": [
                  "Simulator Target Bundle"
                 ]
                }
               }
              }
             },
             "404": {
              "description": "No such entry, not an APNs request, or no apns-topic.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/stream": {
           "get": {
            "summary": "Server-Sent Events of new entries",
            "parameters": [
             {
              "$ref": "#/components/parameters/device"
             },
             {
              "$ref": "#/components/parameters/source"
             },
             {
              "$ref": "#/components/parameters/status"
             },
             {
              "$ref": "#/components/parameters/q"
             },
             {
              "name": "Last-Event-ID",
              "in": "header",
              "schema": {
               "type": "integer",
               "minimum": 0
              },
              "description": "Resume: every retained matching entry after it first, after an `event: gap` with `data: {\"dropped\": n}` when some were dropped meanwhile."
             }
            ],
            "responses": {
             "200": {
              "description": "`event: log`, `id: <seq>`, `data: <entry>` per entry.",
              "content": {
               "text/event-stream": {
                "schema": {
                 "type": "string"
                }
               }
              }
             },
             "400": {
              "description": "A bad filter or Last-Event-ID.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/credentials": {
           "post": {
            "summary": "Credentials for hand tests and key files for real SDKs",
            "description": "`{\"service\":\"apns\"}` (optional `team`, `key_id`): an ES256 key made and registered as `apns_key` does (from then on every provider token's signature is checked) and a provider token signed with it, `iat` now. `{\"service\":\"fcm\",\"project\":…}`: an access token bound to that project, as `/token` issues. With `format` the answer is a key file instead, its key made and registered: `\"p8\"` (APNs; optional `team`, `key_id`) answers `{\"key_id\",\"team_id\",\"p8\"}`, `p8` the `.p8` file's PKCS #8 PEM; `\"service_account\"` (FCM, with `project`) answers the service-account JSON Google's console downloads, `private_key` included, which firebase-admin's `credentials.Certificate` loads as it is (`service` may be left out with a `format`).",
            "requestBody": {
             "required": true,
             "content": {
              "application/json": {
               "schema": {
                "type": "object",
                "properties": {
                 "service": {
                  "type": "string",
                  "enum": [
                   "apns",
                   "fcm"
                  ]
                 },
                 "team": {
                  "type": "string"
                 },
                 "key_id": {
                  "type": "string"
                 },
                 "project": {
                  "type": "string"
                 },
                 "format": {
                  "type": "string",
                  "enum": [
                   "p8",
                   "service_account"
                  ]
                 }
                }
               }
              }
             }
            },
            "responses": {
             "201": {
              "description": "A ready `authorization` header value; with `format`, a key file.",
              "content": {
               "application/json": {
                "schema": {
                 "oneOf": [
                  {
                   "type": "object",
                   "required": [
                    "authorization"
                   ],
                   "properties": {
                    "authorization": {
                     "type": "string"
                    },
                    "team": {
                     "type": "string"
                    },
                    "key_id": {
                     "type": "string"
                    },
                    "expires_at": {
                     "type": "string",
                     "format": "date-time"
                    },
                    "project": {
                     "type": "string"
                    },
                    "expires_in": {
                     "type": "integer"
                    }
                   }
                  },
                  {
                   "type": "object",
                   "required": [
                    "key_id",
                    "team_id",
                    "p8"
                   ],
                   "properties": {
                    "key_id": {
                     "type": "string"
                    },
                    "team_id": {
                     "type": "string"
                    },
                    "p8": {
                     "type": "string"
                    }
                   }
                  },
                  {
                   "type": "object",
                   "required": [
                    "type",
                    "project_id",
                    "private_key_id",
                    "private_key",
                    "client_email",
                    "token_uri"
                   ],
                   "properties": {
                    "type": {
                     "const": "service_account"
                    },
                    "project_id": {
                     "type": "string"
                    },
                    "private_key_id": {
                     "type": "string"
                    },
                    "private_key": {
                     "type": "string"
                    },
                    "client_email": {
                     "type": "string"
                    },
                    "token_uri": {
                     "type": "string"
                    }
                   }
                  }
                 ]
                }
               }
              }
             },
             "400": {
              "description": "An unknown service, or a missing project.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/chaos": {
           "get": {
            "summary": "The chaos rules, each with how many times it still applies (`remaining`)",
            "responses": {
             "200": {
              "description": "",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "properties": {
                  "rules": {
                   "type": "array",
                   "items": {
                    "$ref": "#/components/schemas/ChaosRule"
                   }
                  }
                 },
                 "required": [
                  "rules"
                 ]
                }
               }
              }
             }
            }
           },
           "post": {
            "summary": "Add a chaos rule (chaos.md, \"Rules\"); requests to the services that match it meet its answer, latency or fault",
            "requestBody": {
             "required": true,
             "content": {
              "application/json": {
               "schema": {
                "$ref": "#/components/schemas/ChaosRule"
               }
              }
             }
            },
            "responses": {
             "201": {
              "description": "The rule, with its `id`.",
              "content": {
               "application/json": {
                "schema": {
                 "type": "object",
                 "properties": {
                  "rule": {
                   "$ref": "#/components/schemas/ChaosRule"
                  }
                 },
                 "required": [
                  "rule"
                 ]
                }
               }
              }
             },
             "400": {
              "description": "Not a rule the services take; the sentence says why. Nothing was added.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          },
          "/api/v1/chaos/{id}": {
           "parameters": [
            {
             "name": "id",
             "in": "path",
             "required": true,
             "description": "A rule's id (`c1`), or `all`.",
             "schema": {
              "type": "string"
             }
            }
           ],
           "delete": {
            "summary": "Remove a chaos rule, or every rule (`all`)",
            "responses": {
             "204": {
              "description": "Removed."
             },
             "404": {
              "description": "No such rule.",
              "content": {
               "application/json": {
                "schema": {
                 "$ref": "#/components/schemas/Error"
                }
               }
              }
             }
            }
           }
          }
         },
         "components": {
          "securitySchemes": {
           "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "The `--api-token`, when the shell was given one."
           }
          },
          "schemas": {
           "Error": {
            "type": "object",
            "required": [
             "error"
            ],
            "properties": {
             "error": {
              "type": "string"
             }
            }
           },
           "World": {
            "type": "object",
            "required": [
             "version",
             "devices",
             "log",
             "counts"
            ],
            "properties": {
             "version": {
              "type": "string"
             },
             "listening": {
              "type": [
               "string",
               "null"
              ]
             },
             "ca": {
              "type": [
               "string",
               "null"
              ]
             },
             "uptime_ms": {
              "type": "integer"
             },
             "devices": {
              "type": "integer"
             },
             "connections": {
              "type": "integer"
             },
             "log": {
              "type": "object",
              "properties": {
               "retained": {
                "type": "integer"
               },
               "dropped": {
                "type": "integer"
               },
               "max": {
                "type": "integer"
               },
               "next_seq": {
                "type": "integer"
               },
               "secrets": {
                "type": "string",
                "enum": [
                 "redacted",
                 "shown"
                ],
                "description": "Whether the log shows request secrets redacted (the default) or whole (`--log-secrets`)."
               }
              }
             },
             "counts": {
              "type": "object",
              "description": "Requests answered by source, then status.",
              "additionalProperties": {
               "type": "object",
               "additionalProperties": {
                "type": "integer"
               }
              }
             },
             "watching": {
              "type": "object",
              "properties": {
               "polls": {
                "type": "integer"
               },
               "streams": {
                "type": "integer"
               }
              }
             }
            }
           },
           "Device": {
            "type": "object",
            "required": [
             "device",
             "platform",
             "state",
             "installed",
             "tray"
            ],
            "description": "The `state` reply, plus its bundle and tray size.",
            "properties": {
             "device": {
              "type": "string"
             },
             "platform": {
              "type": "string"
             },
             "state": {
              "type": "string"
             },
             "permission": {
              "type": "string"
             },
             "token": {
              "type": [
               "string",
               "null"
              ]
             },
             "subscriptions": {
              "type": "array",
              "items": {
               "type": "string"
              }
             },
             "buffered": {
              "type": "integer"
             },
             "dropped_taps": {
              "type": "integer"
             },
             "installed": {
              "type": "boolean"
             },
             "channels": {
              "type": "array"
             },
             "bundle": {
              "type": "string"
             },
             "tray": {
              "type": "integer"
             },
             "apns_environment": {
              "type": "string"
             },
             "apns_team": {
              "type": "string"
             },
             "fcm_project": {
              "type": "string"
             }
            }
           },
           "DeviceView": {
            "allOf": [
             {
              "$ref": "#/components/schemas/Device"
             },
             {
              "type": "object",
              "properties": {
               "tray": {
                "type": "array",
                "items": {
                 "type": "object"
                }
               },
               "topics": {
                "type": "array"
               },
               "deliveries": {
                "type": "array",
                "items": {
                 "type": "object"
                }
               }
              }
             }
            ]
           },
           "Entry": {
            "type": "object",
            "required": [
             "seq",
             "time",
             "source",
             "request",
             "status",
             "deliveries"
            ],
            "properties": {
             "seq": {
              "type": "integer"
             },
             "time": {
              "type": "string",
              "format": "date-time"
             },
             "source": {
              "type": "string"
             },
             "device": {
              "type": "string"
             },
             "devices": {
              "type": "array",
              "items": {
               "type": "string"
              }
             },
             "request": {
              "type": "object",
              "description": "What the door saw: `op` for a line, `method`, `path`, `host` (no port), `authority` (as sent), `headers` for HTTP, `topic` for MQTT; `body` as sent (cut at 4 KiB in lists)."
             },
             "status": {
              "type": "integer"
             },
             "reason": {
              "type": "string"
             },
             "error": {
              "type": "string"
             },
             "effect": {
              "type": "string"
             },
             "truncated": {
              "type": "boolean"
             },
             "deliveries": {
              "type": "array",
              "items": {
               "type": "object"
              }
             }
            }
           },
           "ChaosRule": {
            "type": "object",
            "description": "`service` (apns, fcm, oauth, pubnub, webhook, mqtt), optional `match` (device, token, topic, project, environment, path_prefix), `probability` (0 … 1) with `seed`, `count`, `retry_after_s`, and `then`: `{\"answer\": NAME}`, `{\"latency_ms\": {\"fixed\": n} | {\"uniform\": [a, b]} | {\"lognormal\": {\"median\": m, \"sigma\": s}}}`, `{\"fault\": \"goaway\" | \"rst_stream\" | \"close\" | \"tls_fail\"}`, or for mqtt `{\"fault\": \"broker_down\", \"for_ms\": n}` (Docs/Chaos.md).",
            "properties": {
             "id": {
              "type": "string"
             },
             "service": {
              "type": "string"
             },
             "match": {
              "type": "object"
             },
             "probability": {
              "type": "number"
             },
             "seed": {
              "type": "integer"
             },
             "count": {
              "type": "integer"
             },
             "retry_after_s": {
              "type": "integer"
             },
             "then": {
              "type": "object"
             },
             "remaining": {
              "type": [
               "integer",
               "null"
              ]
             }
            },
            "required": [
             "service",
             "then"
            ]
           }
          },
          "parameters": {
           "device": {
            "name": "device",
            "in": "query",
            "schema": {
             "type": "string"
            },
            "description": "Entries that reached this device."
           },
           "source": {
            "name": "source",
            "in": "query",
            "schema": {
             "type": "string",
             "enum": [
              "line",
              "api",
              "apns",
              "fcm",
              "oauth",
              "pubnub",
              "webhook",
              "appwrite",
              "mqtt",
              "tls",
              "http"
             ]
            },
            "description": "The door the request came by."
           },
           "status": {
            "name": "status",
            "in": "query",
            "schema": {
             "type": "string",
             "pattern": "^[1-5]([0-9]{2}|xx)$"
            },
            "description": "A status (`200`) or a class (`4xx`)."
           },
           "q": {
            "name": "q",
            "in": "query",
            "schema": {
             "type": "string"
            },
            "description": "Text in the request, the reason or error, or the effect (any case)."
           }
          }
         }
        }

        """#
}
