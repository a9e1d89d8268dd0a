"""Tree-sitter outlines: realistic sources per language, exact names, kinds and line ranges."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from llmem.code.outline import Outline, Symbol, build_outline, iter_symbols

TS_SOURCE = """\
import { Injectable, Inject } from "@angular/core";
import type { HttpClient } from "@angular/common/http";
import * as path from "node:path";
import defaultThing, { helper as h } from "./helpers";
import "./polyfills";
export { formatDate } from "./dates";
export * from "./reexported";

/** How many times a request is retried. */
export const MAX_RETRIES = 3;
const cacheTtlMs = 60_000;
export const defaults = { retries: MAX_RETRIES };

/**
 * A user as the API returns it.
 */
export interface User {
  id: string;
  name: string;
  greet(other: User): string;
}

export type UserId = User["id"];

// Where a user stands.
export enum Status {
  Active = "active",
  Banned = "banned",
}

@Injectable({ providedIn: "root" })
export class UserService {
  private readonly cache = new Map<UserId, User>();

  constructor(
    private readonly http: HttpClient,
    @Inject("BASE_URL") private readonly baseUrl: string,
  ) {}

  /** Fetches one user. */
  @Memoize()
  async get(id: UserId): Promise<User | undefined> {
    const hit = this.cache.get(id);
    return hit ?? (await this.load(id));
  }

  private async load(id: UserId): Promise<User> {
    return { id, name: path.basename(this.baseUrl) } as User;
  }

  onChange = (user: User): void => {
    this.cache.set(user.id, user);
  };

  static create(): UserService {
    return new UserService({} as HttpClient, "");
  }
}

export function isBanned(user: User, status: Status = Status.Active): boolean {
  return status === Status.Banned;
}

export const toId = (user: User): UserId => user.id;

const formatName = function (user: User): string {
  return user.name.trim();
};

export default function bootstrap(): void {}

namespace Internal {
  export function reset(): void {}
}
"""


TSX_SOURCE = """\
import React, { useState } from "react";

type CardProps = {
  title: string;
  onClose?: () => void;
};

/** A card with a close button. */
export const Card: React.FC<CardProps> = ({ title, onClose }) => {
  const [open, setOpen] = useState(true);
  return open ? (
    <div className="card">
      <h2>{title}</h2>
      <button onClick={() => { setOpen(false); onClose?.(); }}>x</button>
    </div>
  ) : null;
};

export default function App(): JSX.Element {
  return <Card title="Hello" />;
}
"""


JS_SOURCE = """\
const express = require("express");
const { readFile, writeFile } = require("fs/promises");
import { helper } from "./helper.mjs";

const PORT = 8080;

// Keeps the routes together.
// Second line of the comment.
class Router extends Base {
  constructor(app) {
    super();
    this.app = app;
  }

  #secret() {
    return 42;
  }

  static of(app) {
    return new Router(app);
  }
}

function* ids() {
  let i = 0;
  while (true) yield i++;
}

const start = async (port = PORT) => {
  const app = express();
  app.listen(port);
};

module.exports = { Router, start };
"""


GO_SOURCE = """\
// Package server serves things.
package server

import (
	"context"
	"net/http"

	log "github.com/sirupsen/logrus"
)

// DefaultAddr is where the server listens.
const DefaultAddr = ":8080"

const (
	// ModeDev is for development.
	ModeDev = iota
	ModeProd
)

var ErrClosed = errors.New("closed")

// Server serves HTTP.
type Server struct {
	addr string
	mux  *http.ServeMux
}

// Handler handles one request.
type Handler interface {
	Serve(w http.ResponseWriter, r *http.Request) error
	Name() string
}

type Port int

// New makes a server.
func New(addr string) *Server {
	return &Server{addr: addr, mux: http.NewServeMux()}
}

// Start listens until the context ends.
func (s *Server) Start(ctx context.Context) error {
	log.Info("starting")
	return http.ListenAndServe(s.addr, s.mux)
}

func (s Server) Addr() string { return s.addr }

func (p Port) String() string {
	return fmt.Sprint(int(p))
}

func (c *Client) Do() {}
"""


RUST_SOURCE = """\
//! Shapes and their areas.

use std::collections::{HashMap, HashSet};
use std::fmt;
use crate::util::{self, math::{sqrt, PI}};

/// A point in the plane.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// Every shape we know.
pub enum Shape {
    Circle { center: Point, radius: f64 },
    Square(Point, f64),
}

/// Anything with an area.
pub trait Area {
    fn area(&self) -> f64;

    /// Twice the area.
    fn double(&self) -> f64 {
        self.area() * 2.0
    }
}

impl Area for Shape {
    fn area(&self) -> f64 {
        match self {
            Shape::Circle { radius, .. } => PI * radius * radius,
            Shape::Square(_, side) => side * side,
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

impl Point {
    pub const ORIGIN: Point = Point { x: 0.0, y: 0.0 };

    pub fn new(x: f64, y: f64) -> Self {
        Point { x, y }
    }
}

pub type Registry = HashMap<String, Shape>;

pub const MAX_SHAPES: usize = 1024;
static GREETING: &str = "hi";

pub mod io {
    pub fn load(path: &str) -> Vec<super::Shape> {
        Vec::new()
    }

    mod detail {
        pub struct Buffer;
    }
}

pub async fn run() -> Result<(), Box<dyn std::error::Error>> {
    Ok(())
}
"""


JAVA_SOURCE = """\
package com.example.web;

import java.util.List;
import java.util.concurrent.*;
import static java.util.Objects.requireNonNull;

/**
 * Serves users over HTTP.
 */
@RestController
@RequestMapping("/users")
public class UserController extends BaseController implements Closeable {
    private static final int PAGE_SIZE = 20;
    private final UserRepository repo;

    /** Wires the repository in. */
    @Autowired
    public UserController(UserRepository repo) {
        this.repo = requireNonNull(repo);
    }

    @GetMapping("/{id}")
    public User get(@PathVariable long id) throws NotFoundException {
        return repo.find(id).orElseThrow(NotFoundException::new);
    }

    // Lists one page.
    public List<User> list(int page) {
        return repo.page(page, PAGE_SIZE);
    }

    @Override
    public void close() {}

    static final class Page {
        int number;

        Page(int number) {
            this.number = number;
        }
    }
}

interface UserRepository {
    Optional<User> find(long id);

    default List<User> page(int page, int size) {
        return List.of();
    }
}

enum Role {
    ADMIN,
    GUEST;

    boolean canWrite() {
        return this == ADMIN;
    }
}

record UserDto(long id, String name) {
    UserDto {
        requireNonNull(name);
    }

    String display() {
        return id + ": " + name;
    }
}

@interface Audited {
    String value() default "";
}
"""


def _flat(outline: Outline) -> list[tuple[str, str, int, int]]:
    return [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in iter_symbols(outline)]


def _imports(outline: Outline) -> list[tuple[str, list[str], int]]:
    return [(i.module, i.names, i.line) for i in outline.imports]


def _get(outline: Outline, qualified_name: str) -> Symbol:
    matches = [s for s in iter_symbols(outline) if s.qualified_name == qualified_name]
    assert len(matches) == 1, qualified_name
    return matches[0]


def _full(path: str, source: str) -> Outline:
    outline = build_outline(path, source.encode())
    assert outline.mode == "full", outline.reason
    assert outline.reason is None
    assert outline.line_count == source.count("\n")
    return outline


def test_typescript() -> None:
    outline = _full("src/service.ts", TS_SOURCE)
    assert outline.language == "typescript"
    assert _imports(outline) == [
        ("@angular/core", ["Injectable", "Inject"], 1),
        ("@angular/common/http", ["HttpClient"], 2),
        ("node:path", ["*"], 3),
        ("./helpers", ["default", "helper"], 4),
        ("./polyfills", [], 5),
        ("./dates", ["formatDate"], 6),
        ("./reexported", ["*"], 7),
    ]
    assert _flat(outline) == [
        ("constant", "MAX_RETRIES", 10, 10),
        ("variable", "cacheTtlMs", 11, 11),
        ("constant", "defaults", 12, 12),
        ("interface", "User", 17, 21),
        ("field", "User.id", 18, 18),
        ("field", "User.name", 19, 19),
        ("method", "User.greet", 20, 20),
        ("type", "UserId", 23, 23),
        ("enum", "Status", 26, 29),
        ("enum_member", "Status.Active", 27, 27),
        ("enum_member", "Status.Banned", 28, 28),
        ("class", "UserService", 32, 58),
        ("field", "UserService.cache", 33, 33),
        ("method", "UserService.constructor", 35, 38),
        ("field", "UserService.http", 36, 36),
        ("field", "UserService.baseUrl", 37, 37),
        ("method", "UserService.get", 42, 45),
        ("method", "UserService.load", 47, 49),
        ("method", "UserService.onChange", 51, 53),
        ("method", "UserService.create", 55, 57),
        ("function", "isBanned", 60, 62),
        ("function", "toId", 64, 64),
        ("function", "formatName", 66, 68),
        ("function", "bootstrap", 70, 70),
        ("module", "Internal", 72, 74),
        ("function", "Internal.reset", 73, 73),
    ]
    service = _get(outline, "UserService")
    assert service.signature == "class UserService"
    assert service.decorators == ['Injectable({ providedIn: "root" })']
    get = _get(outline, "UserService.get")
    assert get.signature == "async get(id: UserId): Promise<User | undefined>"
    assert get.doc == "Fetches one user."
    assert get.decorators == ["Memoize()"]
    assert _get(outline, "UserService.constructor").signature == (
        'constructor(private readonly http: HttpClient, @Inject("BASE_URL") private readonly baseUrl: string)'
    )
    assert _get(outline, "UserService.load").signature == "private async load(id: UserId): Promise<User>"
    assert _get(outline, "MAX_RETRIES").doc == "How many times a request is retried."
    assert _get(outline, "MAX_RETRIES").signature == "const MAX_RETRIES = 3"
    assert _get(outline, "User").doc == "A user as the API returns it."
    assert _get(outline, "Status").doc == "Where a user stands."
    assert _get(outline, "isBanned").signature == (
        "function isBanned(user: User, status: Status = Status.Active): boolean"
    )
    assert _get(outline, "toId").signature == "const toId = (user: User): UserId =>"
    assert _get(outline, "UserId").signature == 'type UserId = User["id"]'


def test_tsx_component() -> None:
    outline = _full("web/Card.tsx", TSX_SOURCE)
    assert outline.language == "tsx"
    assert _imports(outline) == [("react", ["default", "useState"], 1)]
    assert _flat(outline) == [
        ("type", "CardProps", 3, 6),
        ("function", "Card", 9, 17),
        ("function", "App", 19, 21),
    ]
    card = _get(outline, "Card")
    assert card.doc == "A card with a close button."
    assert card.signature == "const Card: React.FC<CardProps> = ({ title, onClose }) =>"
    assert _get(outline, "App").signature == "function App(): JSX.Element"


def test_javascript() -> None:
    outline = _full("server.js", JS_SOURCE)
    assert outline.language == "javascript"
    assert _imports(outline) == [
        ("express", [], 1),
        ("fs/promises", ["readFile", "writeFile"], 2),
        ("./helper.mjs", ["helper"], 3),
    ]
    assert _flat(outline) == [
        ("constant", "PORT", 5, 5),
        ("class", "Router", 9, 22),
        ("method", "Router.constructor", 10, 13),
        ("method", "Router.#secret", 15, 17),
        ("method", "Router.of", 19, 21),
        ("function", "ids", 24, 27),
        ("function", "start", 29, 32),
    ]
    assert _get(outline, "Router").doc == "Keeps the routes together.\nSecond line of the comment."
    assert _get(outline, "Router").signature == "class Router extends Base"
    assert _get(outline, "Router.of").signature == "static of(app)"
    assert _get(outline, "ids").signature == "function* ids()"
    assert _get(outline, "start").signature == "const start = async (port = PORT) =>"


def test_jsx_goes_through_the_javascript_grammar() -> None:
    source = "export function Hello({ name }) {\n  return <p>Hello {name}</p>;\n}\n"
    outline = _full("Hello.jsx", source)
    assert outline.language == "javascript"
    assert _flat(outline) == [("function", "Hello", 1, 3)]


def test_go() -> None:
    outline = _full("server/server.go", GO_SOURCE)
    assert outline.language == "go"
    assert _imports(outline) == [
        ("context", [], 5),
        ("net/http", [], 6),
        ("github.com/sirupsen/logrus", [], 8),
    ]
    assert _flat(outline) == [
        ("constant", "DefaultAddr", 12, 12),
        ("constant", "ModeDev", 16, 16),
        ("constant", "ModeProd", 17, 17),
        ("constant", "ErrClosed", 20, 20),
        ("struct", "Server", 23, 26),
        ("field", "Server.addr", 24, 24),
        ("field", "Server.mux", 25, 25),
        ("method", "Server.Start", 42, 45),
        ("method", "Server.Addr", 47, 47),
        ("interface", "Handler", 29, 32),
        ("method", "Handler.Serve", 30, 30),
        ("method", "Handler.Name", 31, 31),
        ("type", "Port", 34, 34),
        ("method", "Port.String", 49, 51),
        ("function", "New", 37, 39),
        ("method", "Client.Do", 53, 53),  # receiver type not declared here: stays top level
    ]
    assert _get(outline, "Server").doc == "Server serves HTTP."
    assert _get(outline, "Server").signature == "type Server struct"
    start = _get(outline, "Server.Start")
    assert start.signature == "func (s *Server) Start(ctx context.Context) error"
    assert start.doc == "Start listens until the context ends."
    assert _get(outline, "DefaultAddr").doc == "DefaultAddr is where the server listens."
    assert _get(outline, "ModeDev").doc == "ModeDev is for development."
    assert _get(outline, "ModeProd").doc is None
    assert _get(outline, "New").doc == "New makes a server."
    assert _get(outline, "Port").signature == "type Port int"


def test_rust() -> None:
    outline = _full("src/shapes.rs", RUST_SOURCE)
    assert outline.language == "rust"
    assert _imports(outline) == [
        ("std::collections", ["HashMap", "HashSet"], 3),
        ("std", ["fmt"], 4),
        ("crate::util", ["self"], 5),
        ("crate::util::math", ["sqrt", "PI"], 5),
    ]
    assert _flat(outline) == [
        ("struct", "Point", 9, 12),
        ("field", "Point.x", 10, 10),
        ("field", "Point.y", 11, 11),
        ("enum", "Shape", 15, 18),
        ("enum_member", "Shape.Circle", 16, 16),
        ("enum_member", "Shape.Square", 17, 17),
        ("trait", "Area", 21, 28),
        ("method", "Area.area", 22, 22),
        ("method", "Area.double", 25, 27),
        ("impl", "impl Area for Shape", 30, 37),
        ("method", "Shape.area", 31, 36),
        ("impl", "impl fmt::Display for Point", 39, 43),
        ("method", "Point.fmt", 40, 42),
        ("impl", "impl Point", 45, 51),
        ("constant", "Point.ORIGIN", 46, 46),
        ("method", "Point.new", 48, 50),
        ("type", "Registry", 53, 53),
        ("constant", "MAX_SHAPES", 55, 55),
        ("constant", "GREETING", 56, 56),
        ("module", "io", 58, 66),
        ("function", "io.load", 59, 61),
        ("module", "io.detail", 63, 65),
        ("struct", "io.detail.Buffer", 64, 64),
        ("function", "run", 68, 70),
    ]
    point = _get(outline, "Point")
    assert point.doc == "A point in the plane."
    assert point.decorators == ["derive(Debug, Clone, Copy)"]
    assert point.signature == "pub struct Point"
    assert _get(outline, "Area.double").doc == "Twice the area."
    assert _get(outline, "Point.fmt").signature == "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"
    assert _get(outline, "run").signature == "pub async fn run() -> Result<(), Box<dyn std::error::Error>>"
    assert _get(outline, "MAX_SHAPES").signature == "pub const MAX_SHAPES: usize = 1024"


def test_rust_impl_of_a_generic_type_names_its_methods_after_the_bare_type() -> None:
    source = (
        "impl<'a, T: Clone> From<&'a [T]> for Stack<T> {\n"
        "    fn from(items: &'a [T]) -> Self {\n        todo!()\n    }\n}\n"
    )
    outline = _full("stack.rs", source)
    assert _flat(outline) == [
        ("impl", "impl From<&'a [T]> for Stack<T>", 1, 5),
        ("method", "Stack.from", 2, 4),
    ]


def test_java() -> None:
    outline = _full("src/main/java/com/example/web/UserController.java", JAVA_SOURCE)
    assert outline.language == "java"
    assert _imports(outline) == [
        ("java.util", ["List"], 3),
        ("java.util.concurrent", ["*"], 4),
        ("java.util.Objects", ["requireNonNull"], 5),
    ]
    assert _flat(outline) == [
        ("class", "UserController", 12, 42),
        ("field", "UserController.PAGE_SIZE", 13, 13),
        ("field", "UserController.repo", 14, 14),
        ("method", "UserController.UserController", 18, 20),
        ("method", "UserController.get", 23, 25),
        ("method", "UserController.list", 28, 30),
        ("method", "UserController.close", 33, 33),
        ("class", "UserController.Page", 35, 41),
        ("field", "UserController.Page.number", 36, 36),
        ("method", "UserController.Page.Page", 38, 40),
        ("interface", "UserRepository", 44, 50),
        ("method", "UserRepository.find", 45, 45),
        ("method", "UserRepository.page", 47, 49),
        ("enum", "Role", 52, 59),
        ("enum_member", "Role.ADMIN", 53, 53),
        ("enum_member", "Role.GUEST", 54, 54),
        ("method", "Role.canWrite", 56, 58),
        ("class", "UserDto", 61, 69),
        ("method", "UserDto.UserDto", 62, 64),
        ("method", "UserDto.display", 66, 68),
        ("interface", "Audited", 71, 73),
        ("method", "Audited.value", 72, 72),
    ]
    controller = _get(outline, "UserController")
    assert controller.doc == "Serves users over HTTP."
    assert controller.decorators == ["RestController", 'RequestMapping("/users")']
    assert controller.signature == "public class UserController extends BaseController implements Closeable"
    ctor = _get(outline, "UserController.UserController")
    assert (ctor.doc, ctor.decorators) == ("Wires the repository in.", ["Autowired"])
    assert ctor.signature == "public UserController(UserRepository repo)"
    get = _get(outline, "UserController.get")
    assert get.decorators == ['GetMapping("/{id}")']
    assert get.signature == "public User get(@PathVariable long id) throws NotFoundException"
    assert _get(outline, "UserController.list").doc == "Lists one page."
    assert _get(outline, "UserController.close").decorators == ["Override"]
    assert _get(outline, "UserDto").signature == "record UserDto(long id, String name)"


BROKEN = {
    "broken.ts": (
        "export function before(a: number): number {\n  return a;\n}\n\n"
        "export class Half {\n  method(x: string {\n    return x;\n  }\n}\n\n"
        "export interface After {\n  id: string;\n}\n\nfunction after(): void {}\n",
        6,
        {"before", "Half", "After", "after"},
    ),
    "broken.js": (
        "function before() {}\nconst x = {;\nclass After {}\nfunction after() {}\n",
        2,
        {"before", "after"},
    ),
    "broken.go": (
        "package x\n\nfunc Before() {}\n\nfunc Broken( {\n\tx :=\n}\n\ntype After struct{}\n\nfunc AfterFn() {}\n",
        5,
        {"Before", "After", "AfterFn"},
    ),
    "broken.rs": (
        "fn before() {}\n\nfn broken( {\n    let x = ;\n}\n\nstruct After;\n\nfn after() {}\n",
        3,
        {"before", "After", "after"},
    ),
    "Broken.java": (
        "class Before {\n  void ok() {}\n}\n\nclass Broken {\n  void bad( {\n  }\n}\n\n"
        "class After {\n  void fine() {}\n}\n",
        6,
        {"Before", "After", "After.fine"},
    ),
}


@pytest.mark.parametrize("path", sorted(BROKEN))
def test_broken_files_keep_what_still_parses(path: str) -> None:
    source, error_line, must_have = BROKEN[path]
    outline = build_outline(path, source.encode())
    assert outline.mode == "full"
    assert outline.reason is not None
    assert f"line {error_line}" in outline.reason
    assert must_have <= {s.qualified_name for s in iter_symbols(outline)}
    assert outline.line_count == source.count("\n")


@pytest.mark.parametrize("path", ["a.ts", "a.tsx", "a.js", "a.go", "a.rs", "A.java"])
def test_empty_and_undecodable_files(path: str) -> None:
    empty = build_outline(path, b"")
    assert (empty.mode, empty.line_count, empty.symbols, empty.imports) == ("full", 0, [], [])
    garbage = build_outline(path, b"let \xff\xfe = 1;\nmore\n")
    assert garbage.mode == "fallback"
    assert garbage.reason is not None
    assert garbage.reason.startswith("undecodable")
    assert garbage.line_count == 2


def test_garbage_never_raises() -> None:
    blob = bytes(range(256)) * 40
    for path in ["x.ts", "x.tsx", "x.js", "x.go", "x.rs", "x.java", "x.py"]:
        assert build_outline(path, blob).line_count >= 1
        text = ("}{)(;" * 500 + "class function fn func impl interface").encode()
        assert build_outline(path, text).size == len(text)


def test_bom_is_ignored() -> None:
    outline = build_outline("bom.ts", b"\xef\xbb\xbfexport function f(): void {}\n")
    assert _flat(outline) == [("function", "f", 1, 1)]


def test_parsing_from_several_threads_gives_the_same_outlines() -> None:
    sources = [("a.ts", TS_SOURCE), ("b.go", GO_SOURCE), ("c.rs", RUST_SOURCE), ("D.java", JAVA_SOURCE)] * 8
    expected = {path: build_outline(path, src.encode()) for path, src in sources}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda item: build_outline(item[0], item[1].encode()), sources))
    for (path, _), outline in zip(sources, results, strict=True):
        assert outline == expected[path]


def _imported_modules(code: str) -> list[str]:
    script = f"import sys\n{code}\nprint(sorted(m for m in sys.modules if m.startswith('tree_sitter')))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return [m.strip("' ") for m in out.stdout.strip().strip("[]").split(",") if m.strip()]


def test_importing_the_outline_package_imports_no_tree_sitter() -> None:
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import llmem.code.outline, sys; assert not any(m.startswith('tree_sitter') for m in sys.modules)",
        ],
        check=True,
    )
    assert (
        _imported_modules(
            "import llmem.code.outline, llmem.code.walk\nllmem.code.outline.build_outline('a.py', b'x = 1')"
        )
        == []
    )


def test_only_the_grammar_of_the_language_outlined_is_imported() -> None:
    loaded = _imported_modules(
        "import llmem.code.outline\nllmem.code.outline.build_outline('main.go', b'package main')"
    )
    assert "tree_sitter_go" in loaded
    assert not {
        "tree_sitter_typescript",
        "tree_sitter_javascript",
        "tree_sitter_rust",
        "tree_sitter_java",
    } & set(loaded)
