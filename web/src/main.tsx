import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

import { App } from "./App";
import { Embed } from "./embed/Embed";
import { isEmbedPath } from "./router";
import "./styles/app.css";
import "./styles/admin.css";
import "./styles/shell.css";
import "./styles/chat.css";
import "./styles/embed.css";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>{isEmbedPath(window.location.pathname) ? <Embed /> : <App />}</StrictMode>,
  );
}
