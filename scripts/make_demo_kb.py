"""Write the demo knowledge base (demo/kb/): a small company IT handbook in Chinese and English, as the kinds of file a
real one holds: a PDF with several pages and an outline, a Word file with heading styles, an HTML page with navigation
around its text, Markdown. The text is ours, written for the demo. The files are committed; this script remakes them
(`.venv/bin/python scripts/make_demo_kb.py`; reportlab and python-docx come with the dev extra).
"""

from __future__ import annotations

from pathlib import Path

KB = Path(__file__).resolve().parents[1] / "demo" / "kb"

VPN_PAGES = [  # (heading, paragraphs) per page of the Chinese PDF
    ("1. 安装 VPN 客户端", [
        "公司远程办公使用 Acme Connect 客户端。Windows 和 macOS 用户请从自助门户 it.acme.example 下载安装包，"
        "Linux 用户请安装 acme-connect 软件包。",
        "安装完成后第一次启动，客户端会要求登记你的工号和手机号码，用于双因素认证。"]),
    ("2. 连接 VPN", [
        "在客户端中填写服务器地址 vpn.acme.example，使用域账号和密码登录，然后在手机上的 Acme Authenticator "
        "中确认登录请求。",
        "每次连接最长保持 12 小时，超时后需要重新登录。出差到海外时请选择就近的接入点 vpn-asia.acme.example。"]),
    ("3. 常见问题", [
        "如果连接时提示错误代码 809，通常是家里的路由器拦截了 IPsec 流量：请在路由器中开启 IPsec 直通，"
        "或者在客户端设置中把协议改为 TLS。",
        "如果连接后无法打开内网网站，请先断开再重连一次；问题仍然存在时，请拨打 IT 服务台电话 8000。"]),
]

BACKUP = [  # (level, text) blocks of the English Word file
    (0, "Backup and Restore Policy"),
    (1, "1. Backup schedule"),
    (None, "Every file server and every shared drive is backed up nightly at 01:30. Backups are kept for 35 days; "
           "the last backup of each month is kept for one year."),
    (1, "2. Restoring a file"),
    (None, "Employees restore their own files through the self-service portal restore.acme.example: pick the "
           "folder, choose a date within the last 35 days and press Restore. Older files need a ticket to the "
           "IT service desk."),
    (1, "3. Laptops"),
    (None, "Laptops are not backed up by the nightly job. Keep work files in your Acme Drive folder, which is "
           "synchronised every ten minutes while you are online."),
]

WIKI_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Running the team wiki server</title></head>
<body>
<header><nav><a href="/">IT Handbook</a> | <a href="backup.html">Previous</a> |
<a href="printing.html">Next</a></nav></header>
<main>
<h1>Running the team wiki server</h1>
<p>Teams may host their own wiki on a virtual machine from the self-service portal.</p>
<h2>Requirements</h2>
<p>The wiki server needs 2 CPU cores, 4 GB of memory and 20 GB of disk. Ask for the
<code>wiki-small</code> machine size.</p>
<h2>Configuration</h2>
<p>The configuration file is <code>/etc/acme/wiki.toml</code>. The server listens on port 8088; put the
company single sign-on in front of it by setting <code>sso = true</code>.</p>
<h2>Upgrades</h2>
<p>Upgrades are installed automatically every second Tuesday of the month, between 22:00 and 23:00.
Pin a version with <code>auto_upgrade = false</code> if you must, and upgrade within 30 days.</p>
</main>
<footer>IT Handbook · Acme Corporation · Contact the service desk at extension 8000</footer>
</body></html>
"""

PRINTER_MD = """---
title: 打印机设置
---
# 打印机设置

## 添加打印机

在办公电脑上添加网络打印机，地址是 print.acme.example。Windows 会自动安装驱动，
macOS 需要在系统设置的“打印机与扫描仪”中手动添加。

## 彩色打印

彩色打印默认关闭。需要彩色打印时，请在自助门户提交申请，部门经理审批后两个工作日内开通。

## 扫描到邮箱

在打印机的触摸屏上选择“扫描到邮箱”，刷工卡登录后，扫描件会发送到你的公司邮箱。
"""


def _wrap(text: str, width: int) -> list[str]:
    """Lines of about ``width`` characters, never breaking inside a Latin word."""
    lines, cur = [], ""
    for ch in text:
        if len(cur) >= width and not (ch.isascii() and ch.isalnum() and cur[-1:].isascii() and cur[-1:].isalnum()):
            lines.append(cur)
            cur = ""
        cur += ch
    return lines + [cur] if cur else lines


def make_pdf(path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setTitle("公司 VPN 使用指南")
    width, height = A4
    for n, (heading, paras) in enumerate(VPN_PAGES, start=1):
        c.setFont("STSong-Light", 9)
        c.drawString(60, height - 40, "公司 VPN 使用指南")  # a running header, on every page
        c.bookmarkPage(f"p{n}")
        c.addOutlineEntry(heading, f"p{n}", level=0)
        c.setFont("STSong-Light", 16)
        c.drawString(60, height - 90, heading)
        y = height - 130
        c.setFont("STSong-Light", 11)
        for para in paras:
            for line in _wrap(para, 38):  # wrapped like a typeset page
                c.drawString(60, y, line)
                y -= 18
            y -= 12
        c.setFont("STSong-Light", 9)
        c.drawString(width / 2, 30, str(n))  # the page number in the footer
        c.showPage()
    c.save()


def make_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.core_properties.title = "Backup and Restore Policy"
    for level, text in BACKUP:
        if level is None:
            d.add_paragraph(text)
        else:
            d.add_heading(text, level=level)
    import datetime

    fixed = datetime.datetime(2026, 11, 2, 9, 0, 0)
    d.core_properties.created = d.core_properties.modified = fixed  # the same bytes on every run
    d.save(str(path))


def main() -> None:
    (KB / "zh").mkdir(parents=True, exist_ok=True)
    (KB / "en").mkdir(parents=True, exist_ok=True)
    make_pdf(KB / "zh" / "vpn-guide.pdf")
    make_docx(KB / "en" / "backup-policy.docx")
    (KB / "en" / "wiki-server.html").write_text(WIKI_HTML, encoding="utf-8")
    (KB / "zh" / "printer.md").write_text(PRINTER_MD, encoding="utf-8")


if __name__ == "__main__":
    main()
