"""GitLab's built-in project templates ("Create from template"): fixed data, not drawn from the seed.

A project made from one gets the template's description and files in one commit whose message names the
template, as GitLab's does ("Initialized from 'Android' project template").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProjectTemplate:
    key: str  # GitLab's template_name
    title: str
    summary: str  # what the template list says about it
    description: str  # the new project's description
    files: tuple[tuple[str, str], ...]

    @property
    def commit_message(self) -> str:
        return f"Initialized from '{self.title}' project template"


def _readme(title: str, body: str) -> tuple[str, str]:
    return ("README.md", f"# {title}\n\n{body}\n")


PROJECT_TEMPLATES = {
    t.key: t
    for t in (
        ProjectTemplate(
            "rails",
            "Ruby on Rails",
            "Includes an MVC structure, Gemfile, Rakefile, along with many others, to help you get started",
            "Example Ruby on Rails project",
            (
                _readme("Ruby on Rails", "A Rails application generated from GitLab's template."),
                ("Gemfile", "source 'https://rubygems.org'\ngem 'rails', '~> 7.0'\n"),
                ("Rakefile", "require_relative 'config/application'\nRails.application.load_tasks\n"),
                ("config/routes.rb", "Rails.application.routes.draw do\nend\n"),
            ),
        ),
        ProjectTemplate(
            "spring",
            "Spring",
            "Includes an MVC structure, mvnw and pom.xml to help you get started",
            "Example Spring project",
            (
                _readme("Spring", "A Spring Boot application generated from GitLab's template."),
                ("pom.xml", "<project>\n  <artifactId>demo</artifactId>\n</project>\n"),
                ("mvnw", '#!/bin/sh\nexec mvn "$@"\n'),
            ),
        ),
        ProjectTemplate(
            "express",
            "NodeJS Express",
            "Includes an MVC structure to help you get started",
            "Example NodeJS Express project",
            (
                _readme("NodeJS Express", "An Express application generated from GitLab's template."),
                ("package.json", '{\n  "name": "express-template",\n  "version": "1.0.0"\n}\n'),
                ("app.js", "const express = require('express');\nconst app = express();\nmodule.exports = app;\n"),
            ),
        ),
        ProjectTemplate(
            "iosswift",
            "iOS (Swift)",
            "A ready-to-go template for use with iOS Swift apps",
            "Example iOS Swift project",
            (
                _readme("iOS (Swift)", "An iOS application generated from GitLab's template."),
                ("App/AppDelegate.swift", "import UIKit\n\n@main\nclass AppDelegate: UIResponder {}\n"),
            ),
        ),
        ProjectTemplate(
            "dotnetcore",
            ".NET Core",
            "A .NET Core console application template, customizable for any .NET Core project",
            "Example .NET Core project",
            (
                _readme(".NET Core", "A .NET Core console application generated from GitLab's template."),
                ("Program.cs", 'System.Console.WriteLine("Hello World!");\n'),
            ),
        ),
        ProjectTemplate(
            "android",
            "Android",
            "A ready-to-go template for use with Android apps",
            "Example Android project",
            (
                _readme("Android", "An Android application generated from GitLab's template."),
                ("build.gradle", "buildscript {\n  repositories { google() }\n}\n"),
                ("app/src/main/AndroidManifest.xml", '<manifest package="com.example.app" />\n'),
            ),
        ),
        ProjectTemplate(
            "gomicro",
            "Go Micro",
            "Go Micro is a framework for micro service development",
            "Example Go Micro project",
            (
                _readme("Go Micro", "A Go Micro service generated from GitLab's template."),
                ("main.go", "package main\n\nfunc main() {}\n"),
            ),
        ),
        ProjectTemplate(
            "plainhtml",
            "Pages/Plain HTML",
            "Everything you need to create a GitLab Pages site using plain HTML",
            "Example plain HTML site using GitLab Pages: https://pages.gitlab.io/plain-html",
            (
                _readme("Plain HTML", "A plain HTML site published with GitLab Pages."),
                ("public/index.html", "<!DOCTYPE html>\n<html>\n<body>\n<h1>Hello World!</h1>\n</body>\n</html>\n"),
                (".gitlab-ci.yml", "pages:\n  script:\n    - echo 'Nothing to do'\n"),
            ),
        ),
        ProjectTemplate(
            "jekyll",
            "Pages/Jekyll",
            "Everything you need to create a GitLab Pages site using Jekyll",
            "Example Jekyll site using GitLab Pages: https://pages.gitlab.io/jekyll",
            (
                _readme("Jekyll", "A Jekyll site published with GitLab Pages."),
                ("_config.yml", "title: Jekyll site\n"),
                ("index.md", "---\nlayout: home\n---\n"),
            ),
        ),
        ProjectTemplate(
            "hugo",
            "Pages/Hugo",
            "Everything you need to create a GitLab Pages site using Hugo",
            "Example Hugo site using GitLab Pages: https://pages.gitlab.io/hugo",
            (
                _readme("Hugo", "A Hugo site published with GitLab Pages."),
                ("config.toml", 'title = "Hugo site"\n'),
            ),
        ),
    )
}
