# A VNC server's greeting on host:port: every connection gets RFB's
# 12-byte ProtocolVersion, as the console container's x11vnc sends.
import socket
import sys

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(8)
while True:
    c, _ = s.accept()
    c.sendall(b"RFB 003.008\n")
    c.close()
