#!/usr/bin/env python3
"""Gather permissively licensed source code from the package registries and mine
(natural-language description -> code) pairs from it, for scripts/train_code_embedder.py.

A pair is a doc comment or docstring (its summary paragraph, markup removed) and the definition
it documents, with the doc comment removed from the code side and a title line in front as ragit
gives its chunks (``function name``, ``class Name``...). Nothing mined here is shipped or
committed: downloads, unpacked trees and ``pairs.jsonl`` stay under ``--work`` (default
``/tmp/code-corpus``); only the trained matrix is shipped (see the model's MODEL.md).

Sources (the :data:`SOURCES` table, every one pinned to a version): PyPI wheels/sdists, npm
tarballs, Debian bookworm binary packages (``apt-get download``) and Debian bookworm source
packages (``apt-get source --download-only``, through a private apt configuration under
``--work`` that adds the ``deb-src`` line; the machine's own apt configuration is not touched).
Each source's licence is read from the package itself (PyPI metadata, ``package.json``,
``debian/copyright``) and must be one of MIT/Expat, BSD, Apache-2.0 or ISC; a source whose
licence cannot be confirmed is dropped and reported.

Contamination rule: every repository of the code-search benchmark (both halves, MinishLab
semble ``benchmarks/repos.json``) and of ragit's other development sets is excluded
(:data:`EXCLUDED_REPOS`), by package name, by the upstream URLs a package declares, and by path
inside every unpacked tree (vendored or bundled copies, e.g. ``pip/_vendor/requests``,
``spdlog/fmt/bundled``). Vendored third-party directories are skipped wholesale.

Usage (Python 3.11, no third-party packages; ``pip``, ``npm``, ``apt-get`` and ``dpkg-source``
on PATH; the recorded pairs were made with CPython 3.11.7, whose wheel tags pick the archives)::

    python3 scripts/code_pairs.py download     # ~0.5 GB into /tmp/code-corpus/dl
    python3 scripts/code_pairs.py mine         # unpack, check licences, mine -> pairs.jsonl
    python3 scripts/code_pairs.py all

Output: ``WORK/pairs.jsonl`` (``{lang, source, path, kind, query, code}`` per line, sorted,
deduplicated, capped per source and language) and ``WORK/sources.json`` (per source: version,
licence found, files, pairs, or why it was dropped). Mining is deterministic (sorted walks, no
randomness); which files a registry serves for a pinned version does not change.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

# ----------------------------------------------------------------------------- exclusions

# MinishLab/semble benchmarks/repos.json (all 63 repositories: development and held-out halves)
# plus ragit's other development sets (bench/README.md). owner/name, lower-case.
EXCLUDED_REPOS = [
    "aio-libs/aiohttp", "fastapi/fastapi", "pallets/flask", "encode/httpx", "minishlab/model2vec",
    "pydantic/pydantic", "psf/requests", "encode/starlette", "axios/axios", "expressjs/express",
    "reduxjs/redux", "gin-gonic/gin", "spf13/cobra", "go-chi/chi", "google/gson", "apache/commons-lang",
    "fasterxml/jackson-databind", "guzzle/guzzle", "seldaek/monolog", "laravel/framework",
    "sinatra/sinatra", "rack/rack", "rails/rails", "tokio-rs/tokio", "trpc/trpc",
    "neuecc/messagepack-csharp", "ktorio/ktor", "typelevel/cats", "alamofire/alamofire",
    "pallets/click", "serde-rs/serde", "colinhacks/zod", "nlohmann/json", "phoenixframework/phoenix",
    "tokio-rs/axum", "vitest-dev/vitest", "jamesnk/newtonsoft.json", "dapperlib/dapper",
    "kotlin/kotlinx.coroutines", "jetbrains/exposed", "circe/circe", "http4s/http4s", "vapor/vapor",
    "elixir-plug/plug", "elixir-ecto/ecto", "abseil/abseil-cpp", "fmtlib/fmt", "curl/curl",
    "redis/redis", "libuv/libuv", "bats-core/bats-core", "haskell/aeson", "nvim-telescope/telescope.nvim",
    "folke/lazy.nvim", "ziglang/zig", "nvm-sh/nvm", "bash-it/bash-it", "jgm/pandoc", "xmonad/xmonad",
    "echasnovski/mini.nvim", "zigtools/zls", "hejsil/zig-clap",
    # ragit's other development sets
    "pytest-dev/pytest", "sphinx-doc/sphinx", "pylint-dev/pylint", "mwaskom/seaborn",
]
# Whole organisations left out as well, to keep sibling repositories (plugins, split-out
# packages, forks of the same code) away from the benchmark's: belt and braces.
EXCLUDED_ORGS = [
    "pallets", "encode", "pydantic", "minishlab", "aio-libs", "reduxjs", "gin-gonic", "spf13", "go-chi",
    "fasterxml", "guzzle", "laravel", "rails", "tokio-rs", "trpc", "vitest-dev", "serde-rs", "colinhacks",
    "phoenixframework", "elixir-plug", "elixir-ecto", "typelevel", "circe", "http4s", "vapor", "ktorio",
    "pytest-dev", "sphinx-doc", "pylint-dev", "nvim-telescope", "folke", "echasnovski", "zigtools",
    "ziglang", "xmonad", "jgm", "bats-core", "nvm-sh", "bash-it", "dapperlib", "fmtlib", "nlohmann",
    "abseil", "libuv", "expressjs", "axios",
]
# Package names (any registry; compared after lower-casing and mapping _ . to -) of those
# projects and of their direct siblings.
EXCLUDED_PACKAGES = {
    "aiohttp", "fastapi", "flask", "httpx", "httpcore", "model2vec", "pydantic", "pydantic-core",
    "pydantic-settings", "requests", "starlette", "click", "pytest", "sphinx", "pylint", "astroid",
    "seaborn", "werkzeug", "jinja2", "itsdangerous", "markupsafe", "axios", "express", "redux",
    "@reduxjs/toolkit", "redux-thunk", "zod", "vitest", "@trpc/server", "@trpc/client",
    "golang-github-gin-gonic-gin", "golang-github-spf13-cobra", "golang-github-go-chi-chi",
    "libgoogle-gson-java", "commons-lang3", "libcommons-lang3-java", "jackson-databind",
    "libjackson2-databind-java", "php-guzzlehttp-guzzle", "php-guzzlehttp-psr7", "php-guzzlehttp-promises",
    "php-monolog", "php-laravel-framework", "ruby-sinatra", "ruby-rack", "rails", "ruby-rails",
    "ruby-activesupport", "ruby-actionpack", "ruby-activerecord", "ruby-railties", "rust-tokio",
    "librust-tokio-dev", "rust-serde", "librust-serde-dev", "rust-axum", "librust-axum-dev",
    "nlohmann-json3", "nlohmann-json3-dev", "fmtlib", "libfmt-dev", "abseil", "libabsl-dev", "curl",
    "libcurl4-openssl-dev", "redis", "libuv1", "libuv1-dev", "bats", "haskell-aeson", "pandoc",
    "haskell-pandoc", "haskell-pandoc-types", "xmonad", "xmonad-contrib", "haskell-xmonad", "zig",
    "ziglang", "newtonsoft-json", "nvm", "elixir-phoenix", "kotlinx-coroutines",
}
# Path fragments (lower-case, matched against "/" + path + "/") that mark a vendored or bundled
# copy of an excluded project, or vendored third-party code in general.
EXCLUDED_PATH_PARTS = (
    "/_vendor/", "/vendor/", "/vendored/", "/third_party/", "/third-party/", "/thirdparty/",
    "/node_modules/", "/bundled/", "/external/", "/extern/", "/deps/",
    "/requests/", "/flask/", "/click/", "/pydantic/", "/pydantic_core/", "/_pytest/", "/pytest/",
    "/sphinx/", "/pylint/", "/seaborn/", "/httpx/", "/aiohttp/", "/fastapi/", "/starlette/",
    "/model2vec/", "/axios/", "/express/", "/redux/", "/zod/", "/vitest/", "/serde/", "/serde_derive/",
    "/tokio/", "/axum/", "/nlohmann/", "/absl/", "/include/fmt/", "/fmt/bundled/", "/spdlog/fmt/",
    "/kotlinx/coroutines/", "/kotlinx-coroutines", "/newtonsoft", "/monolog/", "/guzzle", "/illuminate/",
    "/laravel/", "/rack/", "/sinatra/", "/railties/", "/active_support/", "/phoenix/", "/ecto/",
    "/telescope/", "/curl/", "/libcurl/", "/redis/", "/libuv/", "/uv.h", "/uv/", "/aeson/", "/pandoc/",
    "/xmonad/", "/gson/", "/cobra/", "/gin-gonic/", "/go-chi/", "/messagepack", "/dapper/", "/exposed/",
    "/circe/", "/http4s/", "/cats/", "/alamofire/", "/vapor/", "/ktor/", "/bats-core/", "/bash-it/",
)

# ----------------------------------------------------------------------------- sources

# (registry, name, version, licence as declared, what it is for). Registries: pypi (wheel, else
# sdist), npm (tarball), deb (Debian binary package, files under /usr), debsrc (Debian source
# package). Licences are checked again against the package's own files when mining.
SOURCES: list[tuple[str, str, str, str, str]] = [
    # --- Python
    ("pypi", "numpy", "2.4.6", "BSD-3-Clause", "python"),
    ("pypi", "pandas", "3.0.2", "BSD-3-Clause", "python"),
    ("pypi", "scikit-learn", "1.8.0", "BSD-3-Clause", "python"),
    ("pypi", "networkx", "3.6.1", "BSD-3-Clause", "python"),
    ("pypi", "sympy", "1.14.0", "BSD-3-Clause", "python"),
    ("pypi", "django", "5.2.8", "BSD-3-Clause", "python"),
    ("pypi", "sqlalchemy", "2.0.44", "MIT", "python"),
    ("pypi", "attrs", "25.4.0", "MIT", "python"),
    ("pypi", "more-itertools", "10.8.0", "MIT", "python"),
    ("pypi", "toolz", "1.1.0", "BSD-3-Clause", "python"),
    ("pypi", "rich", "14.2.0", "MIT", "python"),
    ("pypi", "tornado", "6.5.2", "Apache-2.0", "python"),
    ("pypi", "twisted", "25.5.0", "MIT", "python"),
    ("pypi", "marshmallow", "4.1.0", "MIT", "python"),
    ("pypi", "urllib3", "2.5.0", "MIT", "python"),
    ("pypi", "pygments", "2.19.2", "BSD-2-Clause", "python"),
    ("pypi", "boltons", "25.0.0", "BSD-3-Clause", "python"),
    ("pypi", "dask", "2025.11.0", "BSD-3-Clause", "python"),
    ("pypi", "xarray", "2025.11.0", "Apache-2.0", "python"),
    ("pypi", "celery", "5.5.3", "BSD-3-Clause", "python"),
    ("pypi", "typer", "0.20.0", "MIT", "python"),
    ("pypi", "black", "25.11.0", "MIT", "python"),
    ("pypi", "mypy", "1.18.2", "MIT", "python"),
    ("pypi", "jedi", "0.19.2", "MIT", "python"),
    ("pypi", "parso", "0.8.5", "MIT", "python"),
    ("pypi", "prompt-toolkit", "3.0.52", "BSD-3-Clause", "python"),
    ("pypi", "ipython", "9.7.0", "BSD-3-Clause", "python"),
    ("pypi", "traitlets", "5.14.3", "BSD-3-Clause", "python"),
    ("pypi", "fsspec", "2025.10.0", "BSD-3-Clause", "python"),
    ("pypi", "anyio", "4.11.0", "MIT", "python"),
    ("pypi", "trio", "0.32.0", "MIT", "python"),
    ("pypi", "transformers", "5.3.0", "Apache-2.0", "python"),
    ("pypi", "arrow", "1.4.0", "Apache-2.0", "python"),
    ("pypi", "sqlglot", "27.29.0", "MIT", "python"),
    ("pypi", "pybind11", "3.0.1", "BSD-3-Clause", "cpp headers"),
    ("pypi", "pythonnet", "3.0.5", "MIT", "csharp (sdist)"),
    ("pypi", "py4j", "0.10.9.9", "BSD-3-Clause", "java (sdist)"),
    # --- JavaScript / TypeScript (and Java/Kotlin/Swift/Objective-C/C++ of React Native modules)
    ("npm", "typescript", "5.9.3", "Apache-2.0", "typescript declarations"),
    ("npm", "@types/node", "24.10.1", "MIT", "typescript declarations"),
    ("npm", "lodash", "4.17.21", "MIT", "javascript"),
    ("npm", "rxjs", "7.8.2", "Apache-2.0", "typescript"),
    ("npm", "date-fns", "4.1.0", "MIT", "javascript/typescript"),
    ("npm", "three", "0.181.2", "MIT", "javascript"),
    ("npm", "moment", "2.30.1", "MIT", "javascript"),
    ("npm", "webpack", "5.103.0", "MIT", "javascript"),
    ("npm", "eslint", "9.39.1", "MIT", "javascript"),
    ("npm", "yargs", "18.0.0", "MIT", "javascript"),
    ("npm", "commander", "14.0.2", "MIT", "javascript"),
    ("npm", "mocha", "11.7.5", "MIT", "javascript"),
    ("npm", "immer", "10.2.0", "MIT", "typescript"),
    ("npm", "mobx", "6.15.0", "MIT", "typescript"),
    ("npm", "preact", "10.27.2", "MIT", "javascript"),
    ("npm", "graphql", "16.12.0", "MIT", "javascript"),
    ("npm", "ws", "8.18.3", "MIT", "javascript"),
    ("npm", "koa", "3.1.1", "MIT", "javascript"),
    ("npm", "fastify", "5.6.2", "MIT", "javascript"),
    ("npm", "luxon", "3.7.2", "MIT", "javascript"),
    ("npm", "ajv", "8.17.1", "MIT", "typescript"),
    ("npm", "fp-ts", "2.16.11", "MIT", "typescript"),
    ("npm", "effect", "3.19.6", "MIT", "typescript"),
    ("npm", "@tanstack/query-core", "5.90.10", "MIT", "typescript"),
    ("npm", "@vue/runtime-core", "3.5.24", "MIT", "typescript"),
    ("npm", "@angular/core", "20.3.12", "MIT", "typescript"),
    ("npm", "rollup", "4.53.3", "MIT", "javascript"),
    ("npm", "chart.js", "4.5.1", "MIT", "javascript"),
    ("npm", "undici", "7.16.0", "MIT", "javascript"),
    ("npm", "knex", "3.1.0", "MIT", "javascript"),
    ("npm", "sequelize", "6.37.7", "MIT", "javascript"),
    ("npm", "typeorm", "0.3.27", "MIT", "typescript"),
    ("npm", "ioredis", "5.8.2", "MIT", "typescript"),
    ("npm", "pino", "10.1.0", "MIT", "javascript"),
    ("npm", "playwright-core", "1.56.1", "Apache-2.0", "javascript"),
    ("npm", "react-native", "0.82.1", "MIT", "java/kotlin/c++/objective-c/javascript"),
    ("npm", "expo-modules-core", "3.0.26", "MIT", "kotlin/swift"),
    ("npm", "expo-camera", "17.0.9", "MIT", "kotlin/swift"),
    ("npm", "expo-file-system", "19.0.19", "MIT", "kotlin/swift"),
    ("npm", "expo-notifications", "0.32.13", "MIT", "kotlin/swift"),
    ("npm", "expo-av", "16.0.7", "MIT", "kotlin/swift/java"),
    ("npm", "expo-image-picker", "17.0.8", "MIT", "kotlin/swift"),
    ("npm", "expo-location", "19.0.7", "MIT", "kotlin/swift"),
    ("npm", "expo-sensors", "15.0.7", "MIT", "kotlin/swift"),
    ("npm", "expo-media-library", "18.2.0", "MIT", "kotlin/swift"),
    ("npm", "expo-image", "3.0.10", "MIT", "kotlin/swift"),
    ("npm", "expo-video", "3.0.14", "MIT", "kotlin/swift"),
    ("npm", "expo-sqlite", "16.0.9", "MIT", "kotlin/swift/c"),
    ("npm", "expo-updates", "29.0.13", "MIT", "kotlin/swift"),
    ("npm", "react-native-screens", "4.18.0", "MIT", "kotlin/objective-c"),
    ("npm", "react-native-reanimated", "4.1.5", "MIT", "java/kotlin/c++"),
    ("npm", "react-native-gesture-handler", "2.29.1", "MIT", "kotlin"),
    ("npm", "react-native-svg", "15.15.0", "MIT", "java"),
    ("npm", "react-native-webview", "13.16.0", "MIT", "java/kotlin"),
    ("npm", "react-native-maps", "1.26.18", "MIT", "java"),
    ("npm", "@stripe/stripe-react-native", "0.55.1", "MIT", "kotlin/swift"),
    ("npm", "react-native-vision-camera", "4.7.3", "MIT", "kotlin/swift"),
    # --- Debian bookworm source packages
    ("debsrc", "golang-1.19", "1.19.8-2", "BSD-3-Clause", "go standard library"),
    ("debsrc", "golang-golang-x-tools", "1:0.5.0+ds-1", "BSD-3-Clause", "go"),
    ("deb", "golang-github-stretchr-testify-dev", "1.8.1-1", "MIT", "go"),
    ("deb", "golang-github-sirupsen-logrus-dev", "1.9.0-1", "MIT", "go"),
    ("debsrc", "golang-github-urfave-cli", "1.22.9-2", "MIT", "go"),
    ("debsrc", "golang-github-gorilla-mux", "1.8.0-1", "BSD-3-Clause", "go"),
    ("debsrc", "golang-github-google-go-cmp", "0.5.9-1", "BSD-3-Clause", "go"),
    ("deb", "golang-github-prometheus-client-golang-dev", "1.14.0-3", "Apache-2.0", "go"),
    ("debsrc", "golang-github-labstack-echo", "4.2.1-3", "MIT", "go"),
    ("debsrc", "golang-gopkg-yaml.v3", "3.0.1-3", "MIT / Apache-2.0", "go"),
    ("debsrc", "rustc", "1.63.0+dfsg1-2", "MIT / Apache-2.0", "rust standard library"),
    ("debsrc", "kotlin", "1.3.31+ds1-1", "Apache-2.0", "kotlin standard library"),
    ("debsrc", "scala", "2.11.12-5", "BSD-3-Clause", "scala standard library"),
    ("debsrc", "elixir-lang", "1.14.0.dfsg-2", "Apache-2.0", "elixir standard library"),
    ("debsrc", "haskell-vector", "0.12.3.1-1", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-megaparsec", "9.2.2-1", "BSD-2-Clause", "haskell"),
    ("debsrc", "haskell-lens", "5.0.1-2", "BSD-2-Clause", "haskell"),
    ("debsrc", "haskell-unordered-containers", "0.2.17.0-2", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-optparse-applicative", "0.16.1.0-1", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-conduit", "1.3.4.3-1", "MIT", "haskell"),
    ("debsrc", "haskell-async", "2.2.4-1", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-servant", "0.19-1", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-text-show", "3.9.7-1", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-hashable", "1.3.5.0-2", "BSD-3-Clause", "haskell"),
    ("debsrc", "haskell-attoparsec", "0.14.4-2", "BSD-3-Clause", "haskell"),
    ("debsrc", "guava-libraries", "31.1-1", "Apache-2.0", "java"),
    ("debsrc", "commons-io", "2.11.0-2", "Apache-2.0", "java"),
    ("debsrc", "jsoup", "1.15.3-1", "MIT", "java"),
    ("debsrc", "netty", "1:4.1.48-7+deb12u2", "Apache-2.0", "java"),
    ("debsrc", "antlr4", "4.7.2-5", "BSD-3-Clause", "java"),
    ("debsrc", "httpcomponents-client", "4.5.14-1", "Apache-2.0", "java"),
    ("debsrc", "symfony", "5.4.53+dfsg-0+deb12u1", "MIT", "php"),
    ("debsrc", "php-doctrine-orm", "2.14.1+dfsg-1", "MIT", "php"),
    ("deb", "php-doctrine-dbal", "3.6.1+dfsg-1", "MIT", "php"),
    ("debsrc", "php-league-commonmark", "2.3.9-1+deb12u1", "BSD-3-Clause", "php"),
    ("debsrc", "composer", "2.5.5-1+deb12u5", "MIT", "php"),
    ("debsrc", "phpunit", "9.6.7-1+deb12u1", "BSD-3-Clause", "php"),
    ("debsrc", "ruby3.1", "3.1.2-7+deb12u1", "BSD-2-Clause (Ruby dual)", "ruby standard library"),
    ("deb", "ruby-concurrent", "1.1.6+dfsg-5", "MIT", "ruby"),
    ("deb", "ruby-i18n", "1.10.0-2", "MIT", "ruby"),
    ("deb", "ruby-rspec-core", "3.12.0c0e1m1s0-1", "MIT", "ruby"),
    ("deb", "ruby-rspec-expectations", "3.12.0c0e1m1s0-1", "MIT", "ruby"),
    ("deb", "ruby-rspec-mocks", "3.12.0c0e1m1s0-1", "MIT", "ruby"),
    ("deb", "ruby-faraday", "1.1.0-7", "MIT", "ruby"),
    ("deb", "ruby-kramdown", "2.4.0-2", "MIT", "ruby"),
    ("deb", "ruby-thor", "1.2.1-2", "MIT", "ruby"),
    ("debsrc", "ruby-nokogiri", "1.13.10+dfsg-2", "MIT", "ruby"),
    ("deb", "ruby-dry-core", "0.7.1-1", "MIT", "ruby"),
    ("debsrc", "luarocks", "3.8.0+dfsg1-1", "MIT", "lua"),
    ("deb", "lua-penlight", "1.13.1-3", "MIT", "lua"),
    ("deb", "lua-busted", "2.1.1-1", "MIT", "lua"),
    ("deb", "lua-luassert", "1.9.0-1", "MIT", "lua"),
    ("deb", "lua-argparse", "0.7.1-2", "MIT", "lua"),
    ("deb", "lua-ldoc", "1.4.6-2", "MIT", "lua"),
    ("deb", "lua-socket", "3.1.0-1+b1", "MIT", "lua"),
    ("debsrc", "lua-lpeg", "1.0.2-2", "MIT", "lua/c"),
    ("debsrc", "lua5.4", "5.4.4-3+deb12u1", "MIT", "c"),
    ("debsrc", "nginx", "1.22.1-9+deb12u9", "BSD-2-Clause", "c"),
    ("debsrc", "zstd", "1.5.4+dfsg2-5", "BSD-3-Clause", "c"),
    ("debsrc", "lz4", "1.9.4-1", "BSD-2-Clause", "c"),
    ("debsrc", "expat", "2.5.0-1+deb12u2", "MIT", "c"),
    ("debsrc", "jansson", "2.14-2", "MIT", "c"),
    ("debsrc", "libevent", "2.1.12-stable-8", "BSD-3-Clause", "c"),
    ("debsrc", "musl", "1.2.3-1", "MIT", "c"),
    ("debsrc", "libsodium", "1.0.18-1+deb12u1", "ISC", "c"),
    ("debsrc", "nghttp2", "1.52.0-1+deb12u3", "MIT", "c"),
    ("debsrc", "c-ares", "1.18.1-3", "MIT", "c"),
    ("debsrc", "libarchive", "3.6.2-1+deb12u4", "BSD-2-Clause", "c"),
    ("debsrc", "libffi", "3.4.4-1", "MIT", "c"),
    ("debsrc", "pcre2", "10.42-1", "BSD-3-Clause", "c"),
    ("debsrc", "tmux", "3.3a-3", "ISC", "c"),
    ("debsrc", "jq", "1.6-2.1+deb12u2", "MIT", "c"),
    ("debsrc", "googletest", "1.12.1-0.2", "BSD-3-Clause", "c++"),
    ("debsrc", "protobuf", "3.21.12-3+deb12u1", "BSD-3-Clause", "c++"),
    ("debsrc", "re2", "20220601+dfsg-1", "BSD-3-Clause", "c++"),
    ("debsrc", "leveldb", "1.23-4", "BSD-3-Clause", "c++"),
    ("debsrc", "flatbuffers", "2.0.8+dfsg1-2", "Apache-2.0", "c++"),
    ("debsrc", "cli11", "2.1.2+ds-1", "BSD-3-Clause", "c++"),
    ("debsrc", "pugixml", "1.13-0.2", "MIT", "c++"),
    ("debsrc", "yaml-cpp", "0.7.0+dfsg-8", "MIT", "c++"),
    ("debsrc", "glm", "0.9.9.8+ds-6", "MIT", "c++"),
    ("debsrc", "ninja-build", "1.11.1-2~deb12u1", "Apache-2.0", "c++"),
    ("debsrc", "capnproto", "0.9.2-2", "MIT", "c++"),
    ("debsrc", "simdjson", "3.0.1-1", "Apache-2.0", "c++"),
    ("debsrc", "doctest", "2.4.9~ds-1", "MIT", "c++"),
    ("debsrc", "rapidjson", "1.1.0+dfsg2-7.1", "MIT", "c++"),
    ("debsrc", "google-glog", "0.6.0-2", "BSD-3-Clause", "c++"),
    ("debsrc", "snappy", "1.1.9-3", "BSD-3-Clause", "c++"),
    ("debsrc", "double-conversion", "3.2.1-1", "BSD-3-Clause", "c++"),
    ("debsrc", "onetbb", "2021.8.0-2+deb12u1", "Apache-2.0", "c++"),
    ("debsrc", "mono", "6.8.0.105+dfsg-3.3+deb12u1", "MIT", "c# class libraries"),
    ("deb", "rbenv", "1.1.2-1", "MIT", "bash"),
    ("deb", "ruby-build", "20220426-1", "MIT", "bash"),
    ("deb", "git-extras", "6.5.0-1", "MIT", "bash"),
    ("deb", "neofetch", "7.1.0-4", "MIT", "bash"),
    ("deb", "shunit2", "2.1.8-3", "Apache-2.0", "bash"),
    ("deb", "dehydrated", "0.7.0-3", "MIT", "bash"),
]
# Debian binary packages of Rust crates (the crate sources under /usr/share/cargo/registry).
RUST_CRATE_VERSIONS = {
    "aho-corasick": "0.7.19-1",
    "anyhow": "1.0.69-1",
    "base64": "0.13.0-1",
    "bstr": "0.2.17-1+b1",
    "chrono": "0.4.23-2",
    "clap": "4.0.32-1",
    "crossbeam-channel": "0.5.6-1",
    "csv": "1.1.6-1",
    "futures-util": "0.3.21-1",
    "globset": "0.4.9-1",
    "hashbrown": "0.12.3-1",
    "http": "0.2.7-1",
    "hyper": "0.14.19-1",
    "ignore": "0.4.18-2+b1",
    "image": "0.24.3-1",
    "indexmap": "1.9.2-1",
    "itertools": "0.10.3-1",
    "log": "0.4.17-3",
    "memchr": "2.5.0-1",
    "nom": "7.1.1-1",
    "num-traits": "0.2.15-1",
    "once-cell": "1.17.0-1",
    "petgraph": "0.6.2-1",
    "proc-macro2": "1.0.47-1",
    "quote": "1.0.21-1",
    "rand-core": "0.6.3-2",
    "rand": "0.8.5-1",
    "rayon-core": "1.10.1-1",
    "rayon": "1.6.1-1",
    "regex": "1.7.1-1",
    "regex-syntax": "0.6.27-1",
    "smallvec": "1.9.0-1",
    "syn": "1.0.107-1",
    "thiserror": "1.0.38-1",
    "time": "0.3.9-1+deb12u1",
    "toml": "0.5.11-1",
    "unicode-segmentation": "1.9.0-1",
    "url": "2.3.1-1",
    "uuid": "1.2.1-1",
    "walkdir": "2.3.2-1",
}
for _crate in ("regex", "regex-syntax", "syn", "rand", "rand-core", "itertools", "hashbrown", "clap",
               "futures-util", "log", "anyhow", "thiserror", "rayon", "rayon-core", "crossbeam-channel",
               "nom", "url", "chrono", "indexmap", "smallvec", "memchr", "num-traits", "once-cell", "toml",
               "hyper", "http", "quote", "proc-macro2", "walkdir", "ignore", "globset", "aho-corasick",
               "bstr", "csv", "image", "petgraph", "unicode-segmentation", "time", "uuid", "base64"):
    SOURCES.append(("deb", f"librust-{_crate}-dev", RUST_CRATE_VERSIONS[_crate], "MIT / Apache-2.0", "rust crate"))

ALLOWED_LICENCES = re.compile(
    r"\b(mit|expat|bsd|apache|isc|0bsd)\b", re.I)
DISALLOWED_LICENCES = re.compile(r"\b(gpl|lgpl|agpl|mpl|epl|cddl|sspl|busl|proprietary|unlicensed)\b", re.I)

# ----------------------------------------------------------------------------- languages

EXTENSIONS = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript", ".go": "go",
    ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
    ".swift": "swift", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
    ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php",
    ".ex": "elixir", ".exs": "elixir", ".hs": "haskell", ".lua": "lua", ".zig": "zig", ".sh": "bash",
    ".bash": "bash", ".m": "objc", ".mm": "objc",
}
BRACE_LANGS = {"javascript", "typescript", "go", "rust", "java", "kotlin", "scala", "swift", "c", "cpp",
               "csharp", "php", "zig", "objc"}
END_LANGS = {"ruby", "lua", "elixir"}
MAX_FILE_BYTES = 1 << 20
MAX_CODE_LINES = 60
MAX_CODE_CHARS = 2400
PAIRS_PER_SOURCE = 6000
PAIRS_PER_FILE = 40

# ----------------------------------------------------------------------------- doc cleaning

_BAD_DOC = re.compile(
    r"copyright|licen[cs]e|spdx|auto-?generated|generated by|do not edit|\btodo\b|fixme|eslint|"
    r"prettier|@ts-|noinspection|nolint|pylint|type: ?ignore|inheritdoc|istanbul|jshint|jscs|"
    r"c8 ignore|deprecated|internal use only|\bxxx\b|\bhack\b|@flow|@format|@generated",
    re.I)
_TAG_STOP = re.compile(
    r"^(@\w|:param|:return|:raises|:type|:rtype|args:|arguments:|parameters\b|returns?:|yields?:|raises:|"
    r"examples?:?$|example usage|notes?:$|see also|attributes:|#+ ?(examples?|panics|errors|safety|"
    r"arguments|returns)|```|>>>|\.\. |-{3,}|={3,}|\\param|\\return|\\brief$)", re.I)
_INLINE = [
    (re.compile(r"\{@(?:link|linkplain|code|literal|see)\s+([^}]*)\}"), r"\1"),
    (re.compile(r"</?(?:summary|remarks|para|p|b|i|em|strong|code|c|tt|br|li|ul|ol|pre)\s*/?>", re.I), " "),
    (re.compile(r'<see\s+(?:c?ref|langword|href)="(?:[A-Z]:)?([^"]*)"\s*/?>', re.I), r"\1"),
    (re.compile(r"<paramref\s+name=\"([^\"]*)\"\s*/?>", re.I), r"\1"),
    (re.compile(r"<[^>]{1,40}>"), " "),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[`?([^\]`]+)`?\]"), r"\1"),
    (re.compile(r"[`*]+"), ""),
    (re.compile(r":(?:func|meth|class|attr|obj|data|mod|exc|ref|py:\w+):`~?([^`]*)`"), r"\1"),
    (re.compile(r"\\brief\s+"), ""),
    (re.compile(r"\s+"), " "),
]


def clean_doc(lines: list[str]) -> str | None:
    """The summary paragraph of a doc comment's text lines (markers already removed)."""
    para: list[str] = []
    for line in lines:
        text = line.strip()
        if _TAG_STOP.match(text):
            break
        if not text:
            if para:
                break
            continue
        para.append(text)
    doc = " ".join(para)
    for pattern, repl in _INLINE:
        doc = pattern.sub(repl, doc)
    doc = doc.strip()
    if len(doc) > 320:
        cut = doc.rfind(". ", 0, 320)
        doc = doc[:cut + 1] if cut > 40 else doc[:320]
    words = doc.split()
    if not 3 <= len(words) <= 80 or _BAD_DOC.search(doc):
        return None
    letters = sum(c.isalpha() for c in doc)
    if letters < 0.6 * len(doc.replace(" ", "")) or not any(c.isalpha() for c in words[0]):
        return None
    return doc


# ----------------------------------------------------------------------------- miners

_NAME_PATTERNS = [
    re.compile(r"\b(?P<kind>class|struct|interface|enum|trait|protocol|object|module|record|union|"
               r"impl|extension|typealias|type|namespace|defmodule)\s+(?P<name>[A-Za-z_][\w.:]*)"),
    re.compile(r"\b(?P<kind>def|defp|defmacro|fn|func|fun|function|sub|proc|method|macro_rules!)\s+"
               r"(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_$][\w$.:!?]*)"),
    re.compile(r"(?P<name>[A-Za-z_$][\w$]*)\s*(?:=|:)\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)"),
    re.compile(r"(?P<name>[A-Za-z_~$][\w$:~]*)\s*\("),
]
_KIND = {"class": "class", "struct": "struct", "interface": "interface", "enum": "enum", "trait": "trait",
         "protocol": "protocol", "object": "object", "module": "module", "record": "record", "union": "union",
         "impl": "impl", "extension": "extension", "typealias": "type", "type": "type", "namespace": "namespace",
         "defmodule": "module"}
_SKIP_NAMES = {"if", "for", "while", "switch", "return", "catch", "sizeof", "new", "await", "typeof", "function"}


def title_for(first: str) -> str:
    """A ragit-like chunk title: ``function name`` or ``class Name`` (else ``definition``)."""
    for pattern in _NAME_PATTERNS:
        match = pattern.search(first)
        if match and match.group("name") not in _SKIP_NAMES:
            kind = match.groupdict().get("kind")
            return f"{_KIND.get(kind, 'function')} {match.group('name').strip('.:')}"
    return "definition"


def _code_block(lines: list[str], start: int, lang: str) -> int:
    """Index one past the last line of the definition that starts at ``lines[start]``."""
    end_limit = min(len(lines), start + MAX_CODE_LINES)
    if lang in BRACE_LANGS or lang == "bash":
        depth, opened = 0, False
        for i in range(start, end_limit):
            code = re.sub(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|//.*$", "", lines[i])
            for ch in code:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if not opened and (code.rstrip().endswith(";") or (i + 1 < len(lines) and (
                    not lines[i + 1].strip() or lines[i + 1].lstrip().startswith(("/**", "///", "//"))))):
                return i + 1  # a declaration, or a definition without a body block (fun f() = x)
            if opened and depth <= 0:
                return i + 1
        return end_limit
    indent = len(lines[start]) - len(lines[start].lstrip())
    if lang in END_LANGS:
        if lang == "elixir" and re.search(r",\s*do:", lines[start]):
            return start + 1
        for i in range(start + 1, end_limit):
            line = lines[i]
            stripped = line.strip()
            if stripped and len(line) - len(line.lstrip()) <= indent:
                return i + 1 if stripped.startswith("end") else i
        return end_limit
    # haskell: the indented continuation and the following equations of the same name
    name = (lines[start].split() or [""])[0]
    i = start + 1
    while i < end_limit:
        line = lines[i]
        if line.strip() and not line[0].isspace() and not line.startswith(name + " "):
            break
        i += 1
    while i > start + 1 and not lines[i - 1].strip():
        i -= 1
    return i


_COMMENT_PREFIX = {
    "python": ("#",), "ruby": ("#",), "bash": ("#",), "elixir": ("#",), "lua": ("---", "--"),
    "haskell": ("-- |", "--"), "go": ("//",), "rust": ("///",), "csharp": ("///",), "swift": ("///",),
    "zig": ("///",), "c": ("///", "//"), "cpp": ("///", "//!", "//"), "javascript": ("///", "//"),
    "typescript": ("///", "//"), "java": ("///",), "kotlin": ("///",), "scala": ("///",), "php": ("///", "//", "#"),
    "objc": ("///",),
}
_DEF_START = re.compile(
    r"^\s*(?:export\s+|public\s+|private\s+|protected\s+|internal\s+|static\s+|final\s+|abstract\s+|"
    r"async\s+|override\s+|open\s+|inline\s+|extern\s+|virtual\s+|const\s+|unsafe\s+|pub(?:\([^)]*\))?\s+|"
    r"default\s+|declare\s+|readonly\s+|local\s+|@\w+(?:\([^)]*\))?\s+)*"
    r"(?:def|defp|defmacro|fn|func|fun|function|class|struct|interface|enum|trait|impl|protocol|object|"
    r"module|type|typealias|extension|record|union|namespace|sub|macro_rules!|val|var|let|const|[\w:<>,*&\[\]\s]+\()"
)

_BASH_DEF = re.compile(r"^\s*(?:function\s+[\w:.-]+|[\w:.-]+\s*\(\s*\))")


def mine_comment_blocks(text: str, lang: str) -> list[tuple[str, int, int, str]]:
    """(doc, start line, end line, code) for each doc comment directly above a definition."""
    lines = text.split("\n")
    prefixes = _COMMENT_PREFIX.get(lang, ("//",))
    out = []
    i, n = 0, len(lines)
    while i < n:
        stripped = lines[i].strip()
        doc_lines: list[str] | None = None
        j = i
        if stripped.startswith("/**") or stripped.startswith("/*!") or (
                stripped.startswith("/*") and lang in ("c", "go") and not stripped.startswith("/*-")):
            doc_lines = []  # /** */, /*! */, and in C and Go plain /* */ blocks
            while j < n:
                body = lines[j].strip()
                done = "*/" in body
                body = body.split("*/")[0]
                body = re.sub(r"^/\*[*!]?", "", body).strip()
                body = re.sub(r"^\*+ ?", "", body)
                doc_lines.append(body)
                j += 1
                if done:
                    break
        elif lang == "elixir" and re.match(r"@doc\s+(~[sS])?\"\"\"", stripped):
            doc_lines = []
            j += 1
            while j < n and not lines[j].strip().startswith('"""'):
                doc_lines.append(lines[j].strip())
                j += 1
            j += 1
        elif lang == "elixir" and re.match(r"@doc\s+\"(.+)\"\s*$", stripped):
            doc_lines = [re.match(r"@doc\s+\"(.+)\"\s*$", stripped).group(1)]
            j += 1
        elif lang == "haskell" and stripped.startswith("-- |"):
            doc_lines = []
            while j < n and lines[j].strip().startswith("--"):
                doc_lines.append(re.sub(r"^--\s*\|?\s?", "", lines[j].strip()))
                j += 1
        elif lang == "haskell" and stripped.startswith("{- |"):
            doc_lines = []
            while j < n:
                body = lines[j].strip()
                doc_lines.append(re.sub(r"^\{-\s*\|?", "", body.split("-}")[0]).strip())
                j += 1
                if "-}" in body:
                    break
        else:
            for prefix in prefixes:
                if stripped.startswith(prefix) and not stripped.startswith(prefix + prefix[-1] * 3) and not (
                        lang in ("python", "ruby", "bash", "php") and stripped.startswith("#!")):
                    doc_lines = []
                    while j < n and lines[j].strip().startswith(prefix):
                        doc_lines.append(lines[j].strip()[len(prefix):].lstrip("|!/").strip())
                        j += 1
                    break
        if doc_lines is None:
            i += 1
            continue
        # the definition must start right after the comment (annotations and attributes are code);
        # Elixir's @spec/@impl between @doc and def are skipped
        if j < n and lang == "elixir":
            while j < n and lines[j].strip().startswith(("@spec", "@impl", "@doc since", "@deprecated")):
                j += 1
        if j >= n or not lines[j].strip() or not (_BASH_DEF if lang == "bash" else _DEF_START).match(lines[j]):
            i = max(j, i + 1)
            continue
        doc = clean_doc(doc_lines)
        if doc is None:
            i = max(j, i + 1)
            continue
        end = _code_block(lines, j, lang)
        code_lines = lines[j:end]
        code = "\n".join(code_lines).rstrip()
        if len(code) >= 30 and len(code_lines) >= 1:
            out.append((doc, j + 1, end, code[:MAX_CODE_CHARS]))
        i = max(j, i + 1)
    return out


def mine_python(text: str) -> list[tuple[str, int, int, str]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = text.split("\n")
    out = []
    stack = [(tree, "")]
    while stack:
        node, owner = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append((child, child.name if isinstance(child, ast.ClassDef) else owner))
                body = child.body
                if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
                    continue
                doc = clean_doc(ast.get_docstring(child, clean=True).split("\n"))
                if doc is None or len(body) < 2:
                    continue
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                ds, de = body[0].lineno, body[0].end_lineno
                end = min(child.end_lineno, start + MAX_CODE_LINES - 1)
                code_lines = [ln for k, ln in enumerate(lines[start - 1:end], start) if not ds <= k <= de]
                code = "\n".join(code_lines).rstrip()
                if len(code) < 30:
                    continue
                if isinstance(child, ast.ClassDef):
                    title = f"class {child.name}"
                elif owner:
                    title = f"method {owner}.{child.name}"
                else:
                    title = f"function {child.name}"
                out.append((doc, start, end, title + "\n" + code[:MAX_CODE_CHARS]))
    return out


def mine_file(path: str, text: str, lang: str) -> list[tuple[str, int, int, str]]:
    if lang == "python":
        return mine_python(text)
    pairs = mine_comment_blocks(text, lang)
    return [(doc, a, b, title_for(code.split("\n", 1)[0]) + "\n" + code) for doc, a, b, code in pairs]


# ----------------------------------------------------------------------------- download / unpack


def norm_name(name: str) -> str:
    return re.sub(r"[_.]", "-", name.lower())


def excluded_name(name: str) -> bool:
    return norm_name(name) in {norm_name(p) for p in EXCLUDED_PACKAGES}


def excluded_url(text: str) -> str | None:
    """The excluded repository or organisation a text (metadata) points at, if any."""
    lowered = text.lower()
    for repo in EXCLUDED_REPOS:
        if re.search(r"github\.com[/:]" + re.escape(repo) + r"(?:\.git)?(?:[/#\s\"')]|$)", lowered):
            return repo
    for org in EXCLUDED_ORGS:
        if re.search(r"github\.com[/:]" + re.escape(org) + r"/", lowered):
            return org
    return None


def excluded_path(rel: str) -> bool:
    probe = "/" + rel.lower() + "/"
    return any(part in probe for part in EXCLUDED_PATH_PARTS)


def _apt_options(work: Path) -> list[str]:
    conf = work / "apt"
    (conf / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    sources = conf / "sources.list"
    if not sources.exists():
        sources.write_text("deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                           "http://deb.debian.org/debian bookworm main\n")
    return ["-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={conf / 'lists'}"]


def source_key(kind: str, name: str) -> str:
    return f"{kind}+{name.replace('/', '+').replace('@', '')}"


def download(work: Path) -> None:
    dl = work / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    apt = _apt_options(work)
    if not any((work / "apt" / "lists").glob("*Sources*")):
        subprocess.run(["apt-get", *apt, "update"], check=True)
    for kind, name, version, _licence, _what in SOURCES:
        if excluded_name(name):
            print(f"skip {name}: excluded by name", file=sys.stderr)
            continue
        target = dl / source_key(kind, name)
        if target.exists() and any(target.iterdir()):
            continue
        target.mkdir(parents=True, exist_ok=True)
        spec = name if not version else (f"{name}@{version}" if kind == "npm" else
                                         f"{name}=={version}" if kind == "pypi" else f"{name}={version}")
        if kind == "pypi":
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(target), spec]
            if name in ("pythonnet", "py4j", "pybind11"):
                cmd[5:5] = ["--no-binary", ":all:"]
            else:
                cmd[5:5] = ["--prefer-binary"]
        elif kind == "npm":
            cmd = ["npm", "pack", "--silent", "--pack-destination", str(target), spec]
        elif kind == "deb":
            cmd = ["apt-get", "download", spec]
        else:
            cmd = ["apt-get", *apt, "source", "--download-only", spec]
        proc = subprocess.run(cmd, cwd=target, capture_output=True, text=True)
        if proc.returncode != 0 and version and kind in ("pypi", "npm"):
            # the pinned version is gone: take what the registry serves and record it
            cmd[-1] = name
            proc = subprocess.run(cmd, cwd=target, capture_output=True, text=True)
        status = "ok" if proc.returncode == 0 else f"FAILED: {proc.stderr.strip()[-200:]}"
        print(f"{kind} {spec}: {status}", file=sys.stderr)


def unpack(work: Path, kind: str, name: str) -> Path | None:
    src = work / "src" / source_key(kind, name)
    dl = work / "dl" / source_key(kind, name)
    if (src / ".done").exists():
        return src
    if not dl.exists():
        return None
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    files = sorted(dl.iterdir())
    for f in files:
        if f.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(f) as z:
                z.extractall(src)
        elif f.name.endswith((".tar.gz", ".tgz", ".tar.bz2")) and kind in ("pypi", "npm"):
            with tarfile.open(f) as t:
                t.extractall(src, filter="data")
        elif f.suffix == ".deb":
            subprocess.run(["dpkg-deb", "-x", str(f), str(src)], check=True)
        elif f.suffix == ".dsc":
            out = src / "tree"
            proc = subprocess.run(["dpkg-source", "--no-check", "--skip-patches", "-x", str(f), str(out)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"cannot unpack {f.name}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
                shutil.rmtree(src, ignore_errors=True)
                return None
    (src / ".done").write_text("")
    return src


def detect_licence(kind: str, root: Path) -> tuple[str, str]:
    """(licence text found, upstream metadata text) of an unpacked source."""
    lic, meta = [], []
    if kind == "pypi":
        for f in sorted(root.glob("*/METADATA")) + sorted(root.glob("*/PKG-INFO")):
            text = f.read_text(errors="replace")
            head = text.split("\n\n", 1)[0]
            lic += [ln for ln in head.splitlines() if ln.startswith(("License", "Classifier: License"))]
            meta.append(head)
    elif kind == "npm":
        for f in sorted(root.glob("*/package.json"))[:1]:  # package/ (scoped @types: the name)
            if f.exists():
                data = json.loads(f.read_text(errors="replace"))
                value = data.get("license") or data.get("licenses") or ""
                lic.append(json.dumps(value))
                meta.append(json.dumps({k: data.get(k) for k in ("repository", "homepage", "bugs")}))
    else:
        copyrights = sorted(root.glob("tree/debian/copyright")) + sorted(root.glob("usr/share/doc/*/copyright"))
        for f in copyrights[:1]:
            text = f.read_text(errors="replace")
            stanzas = text.split("\n\n")
            header = stanzas[0]
            meta.append(header)
            for st in stanzas[1:]:
                if re.search(r"^Files:\s*\*\s*$", st, re.M):
                    m = re.search(r"^License:\s*(.+)$", st, re.M)
                    if m:
                        lic.append(m.group(1))
            if not lic:
                lic += re.findall(r"^License:\s*(.+)$", text, re.M)[:1]
        for f in sorted(root.glob("tree/debian/control"))[:1] + sorted(root.glob("tree/debian/upstream/metadata"))[:1]:
            meta.append(f.read_text(errors="replace"))
    return "; ".join(lic), "\n".join(meta)


# Debian short names of licences that are BSD/MIT texts under another name.
LICENCE_ALIASES = {"Go": "BSD-3-Clause (the Go licence text)", "X11": "MIT (X11 variant)"}


def licence_ok(found: str) -> bool:
    found = "; ".join(LICENCE_ALIASES.get(part.strip(), part) for part in found.split(";"))
    return bool(found) and bool(ALLOWED_LICENCES.search(found)) and not (
        DISALLOWED_LICENCES.search(found) and not re.search(r"\bor\b|\|", found, re.I))


def mine(work: Path) -> None:
    report = {}
    per_source: dict[str, list] = {}
    for kind, name, version, declared, what in SOURCES:
        key = source_key(kind, name)
        entry = {"registry": kind, "name": name, "pinned": version, "declared": declared, "what": what}
        report[key] = entry
        if excluded_name(name):
            entry["dropped"] = "excluded by name"
            continue
        root = unpack(work, kind, name)
        if root is None:
            entry["dropped"] = "not downloaded"
            continue
        entry["files_downloaded"] = sorted(p.name for p in (work / "dl" / key).iterdir())
        found, meta = detect_licence(kind, root)
        entry["licence_found"] = found
        hit = excluded_url(meta)
        if hit:
            entry["dropped"] = f"upstream points at excluded {hit}"
            continue
        if not licence_ok(found):
            entry["dropped"] = f"licence not confirmed as permissive: {found!r}"
            continue
        pairs, files, langs = [], 0, Counter()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, root)
            if rel_dir != "." and excluded_path(rel_dir):
                dirnames[:] = []
                continue
            for fname in sorted(filenames):
                ext = os.path.splitext(fname)[1].lower()
                if fname.endswith((".min.js", ".map")) or ext not in EXTENSIONS:
                    continue
                rel = os.path.normpath(os.path.join(rel_dir, fname))
                if excluded_path(rel):
                    continue
                lang = EXTENSIONS[ext]
                if lang == "objc":
                    continue
                full = os.path.join(dirpath, fname)
                try:
                    if os.path.getsize(full) > MAX_FILE_BYTES:
                        continue
                    text = open(full, encoding="utf-8").read()
                except (UnicodeDecodeError, OSError):
                    continue
                if "\0" in text:
                    continue
                text = text.replace("\r\n", "\n").replace("\r", "\n")
                files += 1
                mined = mine_file(rel, text, lang)[:PAIRS_PER_FILE]
                for doc, a, b, code in mined:
                    pairs.append({"lang": lang, "source": key, "path": rel, "lines": [a, b], "query": doc, "code": code})
                    langs[lang] += 1
        entry["code_files"] = files
        entry["pairs_mined"] = len(pairs)
        entry["languages"] = dict(langs)
        per_source[key] = pairs
    # deduplicate (same doc summary or same code, first source wins in table order), then cap
    seen_q, seen_c = set(), set()
    kept = []
    for kind, name, *_ in SOURCES:
        key = source_key(kind, name)
        pairs = per_source.get(key, [])
        unique = []
        for p in pairs:
            qk = re.sub(r"\W+", " ", p["query"].lower()).strip()
            ck = hashlib.sha1(re.sub(r"\s+", "", p["code"].split("\n", 1)[-1]).encode()).hexdigest()
            if (p["lang"], qk) in seen_q or ck in seen_c:
                continue
            seen_q.add((p["lang"], qk))
            seen_c.add(ck)
            unique.append(p)
        if len(unique) > PAIRS_PER_SOURCE:  # an even spread over the source's files
            step = len(unique) / PAIRS_PER_SOURCE
            unique = [unique[int(i * step)] for i in range(PAIRS_PER_SOURCE)]
        report[key]["pairs_kept"] = len(unique)
        kept += unique
    with open(work / "pairs.jsonl", "w") as fh:
        for p in kept:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    (work / "sources.json").write_text(json.dumps(report, indent=1) + "\n")
    by_lang = Counter(p["lang"] for p in kept)
    print(f"pairs: {len(kept):,}  " + ", ".join(f"{k} {v:,}" for k, v in by_lang.most_common()), file=sys.stderr)
    dropped = {k: v["dropped"] for k, v in report.items() if "dropped" in v}
    for k, why in dropped.items():
        print(f"dropped {k}: {why}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("download", "mine", "all"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/code-corpus"))
    args = parser.parse_args(argv)
    if args.command in ("download", "all"):
        download(args.work)
    if args.command in ("mine", "all"):
        mine(args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
